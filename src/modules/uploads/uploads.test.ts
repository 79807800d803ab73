import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { deflateSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { createLocalStorage } from '../../lib/storage.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';

interface Part {
  name: string;
  data: Buffer | string;
  filename?: string;
  type?: string;
}

/** A multipart/form-data body built by hand, so a test controls every byte of it. */
function multipart(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----muster-test-${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`;
    chunks.push(Buffer.from(head), Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const fileBody = (data: Buffer | string, filename = 'photo.jpg', type = 'image/jpeg') => multipart([{ name: 'file', data, filename, type }]);

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } });

/** The tags of one IFD of a TIFF structure (an EXIF block without its `Exif\0\0` prefix). */
function ifdTags(tiff: Buffer, offset: number): Map<number, number> {
  const le = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (at: number) => (le ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (le ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const tags = new Map<number, number>();
  const count = u16(offset);
  for (let i = 0; i < count; i++) {
    const entry = offset + 2 + i * 12;
    tags.set(u16(entry), u32(entry + 8));
  }
  return tags;
}

/** The GPS tags of an EXIF block (empty when there is no GPS IFD). */
function gpsTags(exif: Buffer): Map<number, number> {
  assert.equal(exif.toString('latin1', 0, 6), 'Exif\0\0');
  const tiff = exif.subarray(6);
  const le = tiff.toString('latin1', 0, 2) === 'II';
  const ifd0 = ifdTags(tiff, le ? tiff.readUInt32LE(4) : tiff.readUInt32BE(4));
  const gpsOffset = ifd0.get(0x8825); // GPSInfo pointer
  return gpsOffset === undefined ? new Map<number, number>() : ifdTags(tiff, gpsOffset);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** A valid 1-bit grey PNG of width x height, all black: huge canvases deflate to almost nothing. */
function bilevelPng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(1, 8); // bit depth
  ihdr.writeUInt8(0, 9); // greyscale
  const rows = Buffer.alloc((1 + Math.ceil(width / 8)) * height); // filter byte 0 + zero bits per row
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(rows, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

const KEY = /^[A-Za-z0-9_-]{32}\.(jpg|png|webp)$/;

describe('Uploads', () => {
  let t: TestApp;
  let user: TestUser;
  before(async () => {
    t = await buildTestApp();
    user = await signUp(t.app);
  });
  after(() => t.close());

  const upload = (form: { payload: Buffer; headers: Record<string, string> }, auth: Record<string, string> = { cookie: user.cookie }) =>
    t.app.inject({ method: 'POST', url: '/v1/upload', headers: { ...form.headers, ...auth }, payload: form.payload });

  /** Uploads, expects 201, and fetches the stored image back through its URL. */
  async function roundTrip(data: Buffer, filename = 'photo', type = 'application/octet-stream') {
    const res = await upload(fileBody(data, filename, type));
    assert.equal(res.statusCode, 201, res.body);
    const { image_url } = body<{ image_url: string }>(res);
    assert.ok(image_url.startsWith('http://muster.test/uploads/'), image_url);
    const key = image_url.slice('http://muster.test/uploads/'.length);
    assert.match(key, KEY, 'the key is 24 random bytes (base64url) and an extension');
    const got = await t.app.inject({ url: new URL(image_url).pathname });
    assert.equal(got.statusCode, 200);
    return { key, got, meta: await sharp(got.rawPayload).metadata() };
  }

  test('JPEG, PNG and WebP upload with 201 and are served back under /uploads/ in their format', async () => {
    const cases = [
      { data: await solid(64, 48).jpeg().toBuffer(), format: 'jpeg', type: 'image/jpeg', ext: 'jpg' },
      { data: await solid(64, 48).png().toBuffer(), format: 'png', type: 'image/png', ext: 'png' },
      { data: await solid(64, 48).webp().toBuffer(), format: 'webp', type: 'image/webp', ext: 'webp' },
    ];
    for (const c of cases) {
      const { key, got, meta } = await roundTrip(c.data);
      assert.ok(key.endsWith(`.${c.ext}`), key);
      assert.equal(got.headers['content-type'], c.type);
      assert.equal(got.headers['x-content-type-options'], 'nosniff');
      assert.equal(got.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(got.headers['content-disposition'], 'inline');
      assert.equal(meta.format, c.format);
      assert.deepEqual([meta.width, meta.height], [64, 48]);
    }
  });

  test('the format is recognised by content: the file name and declared type do not matter', async () => {
    const png = await solid(10, 10).png().toBuffer();
    const { key, got } = await roundTrip(png, 'photo.jpg', 'image/jpeg');
    assert.ok(key.endsWith('.png'));
    assert.equal(got.headers['content-type'], 'image/png');
  });

  test('EXIF with GPS coordinates is not kept', async () => {
    const input = await solid(80, 60)
      .jpeg()
      .withExif({
        IFD0: { Make: 'SpyCam', Model: 'Tracker 9000' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 0/1' },
      })
      .toBuffer();
    // The input really carries GPS: the GPSInfo IFD with GPSLatitudeRef (1) and GPSLatitude (2).
    const inputExif = (await sharp(input).metadata()).exif;
    assert.ok(inputExif, 'the input has EXIF');
    const gps = gpsTags(inputExif);
    assert.ok(gps.has(1) && gps.has(2), 'the input has GPS latitude');
    assert.ok(input.includes('SpyCam'));

    const { got, meta } = await roundTrip(input);
    assert.equal(meta.format, 'jpeg');
    assert.equal(meta.exif, undefined, 'no EXIF at all');
    assert.equal(meta.icc, undefined);
    assert.equal(meta.xmp, undefined);
    assert.equal(got.rawPayload.includes('Exif'), false);
    assert.equal(got.rawPayload.includes('SpyCam'), false);
  });

  test('the EXIF orientation is applied and no orientation tag is left', async () => {
    const input = await solid(200, 100).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const before = await sharp(input).metadata();
    assert.deepEqual([before.width, before.height, before.orientation], [200, 100, 6]);
    const { meta } = await roundTrip(input);
    assert.deepEqual([meta.width, meta.height], [100, 200]);
    assert.equal(meta.orientation, undefined);
    assert.equal(meta.exif, undefined);
  });

  test('an image over 4096 px on a side is scaled to fit 4096', async () => {
    const wide = await roundTrip(await solid(5000, 300).png().toBuffer());
    assert.deepEqual([wide.meta.width, wide.meta.height], [4096, 246]);
    const tall = await roundTrip(await solid(200, 4500).jpeg().toBuffer());
    assert.deepEqual([tall.meta.width, tall.meta.height], [182, 4096]);
    const small = await roundTrip(await solid(300, 200).webp().toBuffer());
    assert.deepEqual([small.meta.width, small.meta.height], [300, 200], 'never enlarged');
  });

  test('keys are unguessable: 24 random bytes each, never repeated', async () => {
    const png = await solid(8, 8).png().toBuffer();
    const keys = new Set<string>();
    for (let i = 0; i < 5; i++) keys.add((await roundTrip(png)).key);
    assert.equal(keys.size, 5);
    const stored = fs.readdirSync(path.join(t.ctx.config.dataDir, 'uploads'));
    assert.ok(stored.every((name) => KEY.test(name)), `only finished files are left: ${stored.join(', ')}`);
  });

  const refused = async (data: Buffer | string, filename: string, type: string, message: string) => {
    const res = await upload(fileBody(data, filename, type));
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(body(res), { error: 'Validation failed', code: 'validation_failed', details: [{ field: 'file', message }] });
  };

  test('text, SVG and GIF are refused with 422 on file, whatever they claim to be', async () => {
    const notImage = 'must be a JPEG, PNG or WebP image';
    await refused('just some text\n', 'notes.txt', 'text/plain', notImage);
    await refused('hello', 'photo.jpg', 'image/jpeg', notImage);
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>';
    await refused(svg, 'photo.svg', 'image/svg+xml', notImage);
    await refused(svg, 'photo.png', 'image/png', notImage);
    await refused(await solid(10, 10).gif().toBuffer(), 'anim.gif', 'image/gif', notImage);
    await refused(Buffer.alloc(0), 'empty.jpg', 'image/jpeg', notImage);
  });

  test('a file with image magic bytes that does not decode is 422 not readable', async () => {
    const unreadable = 'is not a readable image';
    await refused(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(2000)]), 'x.jpg', 'image/jpeg', unreadable);
    await refused(Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(2000)]), 'x.png', 'image/png', unreadable);
    await refused(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 garbage', 'latin1'), 'x.webp', 'image/webp', unreadable);
    const png = await solid(100, 100).png().toBuffer();
    await refused(png.subarray(0, png.length - 40), 'cut.png', 'image/png', unreadable);
  });

  test('a pixel bomb (a small PNG declaring 20000 x 20000) is 422 too many pixels', async () => {
    const bomb = bilevelPng(20_000, 20_000);
    assert.ok(bomb.length < 200_000, `the bomb is small: ${bomb.length} bytes`);
    const meta = await sharp(bomb, { limitInputPixels: false }).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['png', 20_000, 20_000]);
    await refused(bomb, 'bomb.png', 'image/png', 'has too many pixels');
  });

  test('a file over 10 MB is 413', async () => {
    const jpeg = await solid(16, 16).jpeg().toBuffer();
    const big = Buffer.concat([jpeg.subarray(0, 20), randomBytes(10 * 1024 * 1024 + 1024)]);
    const res = await upload(fileBody(big));
    assert.equal(res.statusCode, 413, res.body);
    assert.deepEqual(body(res), { error: 'Payload too large', code: 'payload_too_large' });
  });

  test('a file over 10 MB is 413 also when the limit falls on a chunk boundary of a streamed body', async () => {
    // Chunks as a socket delivers them: the file's bytes reach exactly 10 MB at the end of one chunk.
    const form = fileBody(Buffer.alloc(0));
    const head = form.payload.subarray(0, form.payload.indexOf('\r\n\r\n') + 4);
    const chunk = 64 * 1024;
    const chunks = [head, Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), randomBytes(chunk - 3)])];
    for (let i = 1; i < (10 * 1024 * 1024) / chunk + 8; i++) chunks.push(randomBytes(chunk));
    chunks.push(form.payload.subarray(head.length));
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/upload',
      headers: { ...form.headers, cookie: user.cookie },
      payload: Readable.from(chunks),
    });
    assert.equal(res.statusCode, 413, res.body);
    assert.deepEqual(body(res), { error: 'Payload too large', code: 'payload_too_large' });
  });

  test('a body declared over 11 MB is 413 before it is read', async () => {
    const res = await upload(fileBody(randomBytes(11 * 1024 * 1024 + 1)));
    assert.equal(res.statusCode, 413, res.body);
    assert.deepEqual(body(res), { error: 'Payload too large', code: 'payload_too_large' });
  });

  test('a file of exactly 10 MB is accepted', async () => {
    const jpeg = await solid(16, 16).jpeg().toBuffer();
    const exact = Buffer.concat([jpeg, Buffer.alloc(10 * 1024 * 1024 - jpeg.length)]);
    const res = await upload(fileBody(exact));
    // The decoder stops at the end-of-image marker: the zero padding after it is ignored.
    assert.equal(res.statusCode, 201, res.body);
  });

  test('no file part, or a file under another name, is 422 file is required', async () => {
    for (const form of [
      multipart([{ name: 'caption', data: 'hello' }]),
      multipart([{ name: 'photo', data: 'abc', filename: 'a.jpg', type: 'image/jpeg' }]),
      multipart([]),
    ]) {
      const res = await upload(form);
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(body(res).details, [{ field: 'file', message: 'is required' }]);
    }
  });

  test('a field before the file and more files after it do not get in the way', async () => {
    const png = await solid(12, 12).png().toBuffer();
    const res = await upload(
      multipart([
        { name: 'caption', data: 'hello' },
        { name: 'file', data: png, filename: 'a.png', type: 'image/png' },
        { name: 'file', data: png, filename: 'b.png', type: 'image/png' },
      ]),
    );
    assert.equal(res.statusCode, 201, res.body);
  });

  test('too many parts is 413', async () => {
    const parts = Array.from({ length: 12 }, (_, i) => ({ name: `f${i}`, data: 'x' }));
    const res = await upload(multipart(parts));
    assert.equal(res.statusCode, 413, res.body);
    assert.deepEqual(body(res), { error: 'Payload too large', code: 'payload_too_large' });
  });

  test('a malformed multipart body is 400, a JSON body is 415', async () => {
    const garbled = await t.app.inject({
      method: 'POST',
      url: '/v1/upload',
      headers: { cookie: user.cookie, 'content-type': 'multipart/form-data; boundary=xyz' },
      payload: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n\r\nabc',
    });
    assert.equal(garbled.statusCode, 400, garbled.body);
    assert.equal(body(garbled).code, 'bad_request');

    const noBoundary = await t.app.inject({
      method: 'POST',
      url: '/v1/upload',
      headers: { cookie: user.cookie, 'content-type': 'multipart/form-data' },
      payload: 'abc',
    });
    assert.equal(noBoundary.statusCode, 400, noBoundary.body);

    const json = await t.app.inject({ method: 'POST', url: '/v1/upload', headers: { cookie: user.cookie }, payload: { file: 'abc' } });
    assert.equal(json.statusCode, 415, json.body);
    assert.deepEqual(body(json), { error: 'Unsupported media type', code: 'unsupported_media_type' });
  });

  test('uploading needs a credential; an API key works', async () => {
    const png = await solid(8, 8).png().toBuffer();
    const res = await upload(fileBody(png), {});
    assert.equal(res.statusCode, 401);
    assert.deepEqual(body(res), { error: 'Unauthorized', code: 'unauthorized' });
    const { key } = await createKey(t.app, user.cookie, 'live');
    assert.equal((await upload(fileBody(png), { 'x-api-key': key })).statusCode, 201);
  });

  test('unknown keys and path tricks are 404', async () => {
    const urls = [
      '/uploads/../../etc/passwd',
      '/uploads/..%2F..%2Fetc%2Fpasswd',
      '/uploads/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
      '/uploads/..%2F..%2Fmuster.db',
      // ('/uploads/..' is not here: the URL parser resolves it to '/', the dashboard's redirect.)
      '/uploads/',
      `/uploads/${'A'.repeat(32)}.jpg`,
      `/uploads/${'A'.repeat(32)}.svg`,
    ];
    for (const url of urls) {
      const res = await t.app.inject({ url });
      assert.equal(res.statusCode, 404, `${url}: ${res.statusCode}`);
      assert.deepEqual(body(res), { error: 'Not found', code: 'not_found' }, url);
    }
    // A NUL in a path is refused before any route runs (422 on every route, see src/lib/nul.ts).
    const nul = await t.app.inject({ url: `/uploads/${'a'.repeat(32)}.jpg%00.png` });
    assert.equal(nul.statusCode, 422);
    assert.equal(body<{ code: string }>(nul).code, 'validation_failed');
  });

  test('a JSON route still refuses multipart with 415', async () => {
    const form = multipart([
      { name: 'email', data: user.email },
      { name: 'password', data: user.password },
    ]);
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', headers: form.headers, payload: form.payload });
    assert.equal(res.statusCode, 415, res.body);
    assert.deepEqual(body(res), { error: 'Unsupported media type', code: 'unsupported_media_type' });
  });

  test('FormData bodies as browsers send them work', async () => {
    const form = new FormData();
    form.append('file', new Blob([await solid(20, 10).webp().toBuffer()], { type: 'image/webp' }), 'me.webp');
    const encoded = new Response(form);
    const payload = Buffer.from(await encoded.arrayBuffer());
    const res = await upload({ payload, headers: { 'content-type': encoded.headers.get('content-type')! } });
    assert.equal(res.statusCode, 201, res.body);
  });
});

describe('Local storage', () => {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'muster-storage-')), 'nested', 'uploads');
  after(() => fs.rmSync(path.dirname(path.dirname(dir)), { recursive: true, force: true }));
  const storage = createLocalStorage(dir);

  test('creates its directory on first use and reads back bytes and type from the extension', async () => {
    assert.equal(fs.existsSync(dir), false);
    const key = `${'a'.repeat(32)}.webp`;
    await storage.put(key, Buffer.from('bytes'), 'image/webp');
    assert.deepEqual(await storage.get(key), { data: Buffer.from('bytes'), contentType: 'image/webp' });
    assert.deepEqual(fs.readdirSync(dir), [key], 'no temporary file is left');
    assert.equal(await storage.get(`${'b'.repeat(32)}.webp`), undefined);
  });

  test('refuses keys that are not a token and an image extension', async () => {
    for (const key of ['../../etc/passwd', `../${'a'.repeat(32)}.jpg`, `${'a'.repeat(32)}.svg`, 'short.jpg', `${'a'.repeat(32)}.jpg/x`, `${'a'.repeat(65)}.png`]) {
      await assert.rejects(storage.put(key, Buffer.from('x'), 'image/jpeg'), /invalid storage key/, key);
      assert.equal(await storage.get(key), undefined, key);
    }
  });
});
