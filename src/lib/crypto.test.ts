import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomToken, timeOrderedToken } from './crypto.js';

test('timeOrderedToken: 32 URL-safe characters, the time first, then 144 random bits', () => {
  const at = Date.parse('2026-11-24T21:00:00.000Z');
  const token = timeOrderedToken(at);
  assert.match(token, /^[0-9a-z]{8}[A-Za-z0-9_-]{24}$/);
  assert.equal(parseInt(token.slice(0, 8), 36), at);
  // The same millisecond: the random part keeps every token distinct.
  const many = new Set(Array.from({ length: 2000 }, () => timeOrderedToken(at)));
  assert.equal(many.size, 2000);
  assert.equal(new Set([...many].map((t) => t.slice(8))).size, 2000);
});

test('timeOrderedToken: later times sort later, across a change of digit count and up to 2059', () => {
  const times = [0, 35, 36, 1_295, 1_296, Date.parse('2001-09-09T01:46:40Z'), Date.parse('2026-11-24T21:00:00Z'), Date.parse('2026-11-24T21:00:00.001Z'), Date.parse('2059-01-01T00:00:00Z')];
  const tokens = times.map((t) => timeOrderedToken(t));
  const byText = [...tokens].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert.deepEqual(byText.map((t) => t.slice(0, 8)), tokens.map((t) => t.slice(0, 8)));
  for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i - 1]!.slice(0, 8) < tokens[i]!.slice(0, 8), `${times[i - 1]} before ${times[i]}`);
});

test('randomToken: the bytes asked for, each drawn once, across refills of the 4 KiB pool and beyond it', () => {
  const seen = new Set<string>();
  // 600 tokens of 16 to 48 bytes: about 19 KiB, so several refills, at offsets that do not divide the pool.
  for (let i = 0; i < 600; i++) {
    const bytes = 16 + (i % 33);
    const token = randomToken(bytes);
    assert.match(token, /^[A-Za-z0-9_-]+$/);
    assert.equal(Buffer.from(token, 'base64url').length, bytes);
    assert.ok(!seen.has(token), `token ${i} repeats an earlier one`);
    seen.add(token);
  }
  // Wider than the pool: drawn on its own, whole.
  const wide = Buffer.from(randomToken(5000), 'base64url');
  assert.equal(wide.length, 5000);
  assert.ok(new Set(wide).size > 200, 'the wide token is random bytes, not a repeated pattern');
  assert.equal(Buffer.from(randomToken(), 'base64url').length, 32);
});
