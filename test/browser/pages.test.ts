/// <reference lib="dom" />
// Every page address serves its built page, the assets load, and nothing errors in the console.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browser, browserSuite, server, watchErrors } from './harness.js';

browserSuite();

test('the root redirects to the dashboard, which renders without errors', async () => {
  const page = await browser.newPage();
  const errors = watchErrors(page);
  const res = await page.goto(server.url + '/');
  assert.equal(new URL(page.url()).pathname, '/app/');
  assert.equal(res?.status(), 200);
  await page.waitForSelector('#root *');
  // Signed out, the dashboard's session check answers 401 (Chromium logs every non-2xx load).
  assert.deepEqual(errors.filter((e) => !/status of 401/.test(e)), []);
  await page.close();
});

test('hashed assets are immutable, pages are revalidated, /embed.js is served', async () => {
  const page = await fetch(server.url + '/field');
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('cache-control'), 'no-cache');
  const html = await page.text();
  const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  assert.ok(asset, 'the page references a hashed script');
  const js = await fetch(server.url + asset);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('cache-control') ?? '', /immutable/);
  const embed = await fetch(server.url + '/embed.js');
  assert.equal(embed.status, 200);
  assert.match(embed.headers.get('content-type') ?? '', /javascript/);
  const manifest = await fetch(server.url + '/.vite/manifest.json');
  assert.equal(manifest.status, 404);
});
