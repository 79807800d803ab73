// Helpers of the operations tests (issue #22): uploads, signals and the files behind them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { FastifyInstance } from 'fastify';
import type { TestApp, Headers } from '../helpers.js';
import { multipart } from '../security-suites/fixture.js';

/** Uploads a small PNG as the caller; answers its image_url. */
export async function upload(app: FastifyInstance, headers: Headers): Promise<string> {
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer();
  const form = multipart(png);
  const res = await app.inject({ method: 'POST', url: '/v1/upload', headers: { ...headers, ...form.headers }, payload: form.payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ image_url: string }>().image_url;
}

/** The file on disk behind one of our upload URLs. */
export const fileOf = (t: TestApp, imageUrl: string) => path.join(t.ctx.config.dataDir, 'uploads', imageUrl.slice(imageUrl.lastIndexOf('/') + 1));
export const exists = (file: string) => fs.existsSync(file);

/** Posts a signal; answers its record. */
export async function postSignal(app: FastifyInstance, headers: Headers, body: Record<string, unknown>): Promise<{ Id: number | null; image_url?: string | null }> {
  const res = await app.inject({ method: 'POST', url: '/v1/signals', headers, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** Ids of the signals the caller sees. */
export async function signalIds(app: FastifyInstance, headers: Headers, query = ''): Promise<number[]> {
  const res = await app.inject({ method: 'GET', url: `/v1/signals?limit=200${query}`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ signals: { Id: number }[] }>().signals.map((s) => s.Id);
}
