import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timeOrderedToken } from './crypto.js';

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
