import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contrastWithWhite, initialsOf, PERSON_COLORS, personColor, recordTrails, TRAIL_LENGTH } from '../web/src/app/views/map-people.js';

// The dispatcher's map (docs/web.md): initials, a colour per person, trails kept in page memory.

test('every person colour carries a white label at WCAG AA (4.5:1), none is the incidents red, and they are distinct', () => {
  for (const c of PERSON_COLORS) assert.ok(contrastWithWhite(c) >= 4.5, `${c}: ${contrastWithWhite(c).toFixed(2)}`);
  assert.equal(new Set(PERSON_COLORS).size, PERSON_COLORS.length);
  assert.ok(!PERSON_COLORS.includes('#b42318' as never));
  // The formula: white on #767676 is the classic 4.54:1.
  assert.equal(contrastWithWhite('#767676').toFixed(2), '4.54');
});

test('a person keeps one colour (from the user id); consecutive users differ', () => {
  assert.equal(personColor(7), personColor(7));
  assert.equal(personColor(7), personColor(7 + PERSON_COLORS.length));
  for (let id = 1; id < 40; id++) assert.notEqual(personColor(id), personColor(id + 1));
});

test('initials: first and last word, or the first two letters of one word, upper case', () => {
  assert.equal(initialsOf('Nina Near'), 'NN');
  assert.equal(initialsOf('  anna maria  van der berg '), 'AB');
  assert.equal(initialsOf('Cher'), 'CH');
  assert.equal(initialsOf('Émile Zola'), 'ÉZ');
  assert.equal(initialsOf('(Ops) Desk 2'), 'O2');
  assert.equal(initialsOf(''), '?');
  assert.equal(initialsOf('— —'), '?');
});

test('trails: a position is added when the device moved, the last 20 are kept', () => {
  const trails = new Map<string, [number, number][]>();
  assert.equal(recordTrails(trails, [{ key: 'a', lat: 1, lng: 1 }, { key: 'b', lat: null, lng: null }]), true);
  assert.equal(recordTrails(trails, [{ key: 'a', lat: 1, lng: 1 }]), false, 'the same position is not a step');
  for (let i = 2; i <= 30; i++) recordTrails(trails, [{ key: 'a', lat: i, lng: i }]);
  const a = trails.get('a')!;
  assert.equal(a.length, TRAIL_LENGTH);
  assert.deepEqual([a[0], a[a.length - 1]], [[11, 11], [30, 30]]);
  assert.equal(trails.has('b'), false);
});
