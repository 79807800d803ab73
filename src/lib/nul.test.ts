import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fieldWithNul } from './nul.js';

// fieldWithNul first walks without building any path, and searches the path only when it found a NUL.
describe('fieldWithNul', () => {
  test('none: undefined, for flat and nested input of every kind', () => {
    for (const v of [undefined, null, 0, true, '', 'text', [], {}, { a: 'x', b: [1, 'y', { c: null }], d: { e: { f: 'g' } } }]) assert.equal(fieldWithNul(v, 'body'), undefined);
  });

  test('the first field holding one, depth first in key order, keys included', () => {
    assert.equal(fieldWithNul('a\u0000b'), 'value');
    assert.equal(fieldWithNul('a\u0000b', 'query'), 'query');
    assert.equal(fieldWithNul({ a: 'ok', b: 'x\u0000' }, 'body'), 'body.b');
    assert.equal(fieldWithNul({ a: { b: ['ok', { c: '\u0000' }] }, z: '\u0000' }, 'body'), 'body.a.b.1.c', 'the first in key order, not the shallowest');
    assert.equal(fieldWithNul({ ok: 1, ['k\u0000']: 'v' }, 'query'), 'query.k\u0000');
    assert.equal(fieldWithNul({ a: { ['k\u0000']: 'v' } }), 'a.k\u0000');
    assert.equal(fieldWithNul([['x', '\u0000']]), '0.1');
  });

  test('no input is too deep (an explicit stack, both walks)', () => {
    let deep: unknown = 'end\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(fieldWithNul(deep, 'body'), `body${'.0'.repeat(100_000)}`);
    let clean: unknown = 'end';
    for (let i = 0; i < 100_000; i++) clean = { a: clean };
    assert.equal(fieldWithNul(clean, 'body'), undefined);
  });
});
