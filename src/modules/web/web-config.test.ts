import assert from 'node:assert/strict';
import { test } from 'node:test';
import { body, buildTestApp } from '../../../test/helpers.js';
import { signUp } from '../../../test/factories.js';

interface WebConfig {
  map_tile_url: string;
  map_attribution: string;
  first_run: boolean;
}

test('GET /v1/web/config is public and answers the default OpenStreetMap tiles', async () => {
  const t = await buildTestApp();
  try {
    const res = await t.app.inject({ url: '/v1/web/config' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(body<WebConfig>(res), {
      map_tile_url: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png',
      map_attribution: '&copy; OpenStreetMap contributors',
      first_run: true,
    });
  } finally {
    await t.close();
  }
});

test('MAP_TILE_URL and MAP_TILE_ATTRIBUTION reach the page; an empty MAP_TILE_URL means no tiles', async () => {
  const custom = await buildTestApp({ MAP_TILE_URL: 'https://tiles.example.com/{z}/{x}/{y}.png', MAP_TILE_ATTRIBUTION: 'Example tiles' });
  try {
    assert.deepEqual(body<WebConfig>(await custom.app.inject({ url: '/v1/web/config' })), {
      map_tile_url: 'https://tiles.example.com/{z}/{x}/{y}.png',
      map_attribution: 'Example tiles',
      first_run: true,
    });
  } finally {
    await custom.close();
  }
  const none = await buildTestApp({ MAP_TILE_URL: '' });
  try {
    assert.equal(body<WebConfig>(await none.app.inject({ url: '/v1/web/config' })).map_tile_url, '');
  } finally {
    await none.close();
  }
});

test('first_run: true on a fresh instance, false once the first account exists', async () => {
  const t = await buildTestApp();
  try {
    assert.equal(body<WebConfig>(await t.app.inject({ url: '/v1/web/config' })).first_run, true);
    await signUp(t.app, { name: 'First Admin' });
    assert.equal(body<WebConfig>(await t.app.inject({ url: '/v1/web/config' })).first_run, false);
  } finally {
    await t.close();
  }
});

test('a MAP_TILE_URL without {z} is refused at boot', async () => {
  await assert.rejects(buildTestApp({ MAP_TILE_URL: 'ftp://tiles.example.com/tile.png' }), /MAP_TILE_URL/);
});
