// A small JSON-schema -> fast-check converter for the schemas of our OpenAPI document (TypeBox
// output): `valid` draws values the schema accepts, `invalid` draws values it should refuse, and
// `mixed` builds objects whose properties are mostly valid, sometimes invalid, missing or extra.
// Property names with a meaning in this service (ids, dates, zones) can draw real values through
// `hints`, so a handler sees existing records and not only the 404 path.
import fc, { type Arbitrary } from 'fast-check';

export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
  minProperties?: number;
}

export type Hints = Record<string, Arbitrary<unknown>>;

const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'Pacific/Chatham', 'America/St_Johns'];
const recentDate = fc.date({ min: new Date('2025-12-01T00:00:00Z'), max: new Date('2026-04-30T00:00:00Z'), noInvalidDate: true });

/** Values no well-formed request carries: wrong types, extremes, odd text, bad dates, malformed ids. */
export const junk: Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, -0, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1e308, -1e308, Number.MAX_SAFE_INTEGER, 0.5),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\uD800',
    '../../etc/passwd',
    '%00',
    '%',
    '1e3',
    '-1',
    '0x10',
    '١٢٣',
    'NaN',
    'Infinity',
    '2026-02-30',
    '2026-13-01T25:61:00Z',
    '2026-01-01T00:00:00+99:99',
    '9999-12-31T23:59:59Z',
    '+275760-09-13T00:00:00Z',
    '0000-01-01',
    '1970-01-01T00:00:00Z',
    "' OR 1=1 --",
    '<script>alert(1)</script>',
    'bk_',
    'bk_000000000000000000000000',
    'a.b',
    'Z'.repeat(300),
    '😀'.repeat(100),
  ),
  fc.integer({ min: 1_000, max: 120_000 }).map((n) => 'x'.repeat(n)),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null)), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { maxKeys: 3 }),
);

function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type;
  if (s.type) return [s.type];
  if (s.properties) return ['object'];
  return [];
}

function stringArb(s: Schema, name: string, hints: Hints): Arbitrary<unknown> {
  if (hints[name]) return hints[name];
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 200, 200);
  const fit = (a: Arbitrary<string>) => a.filter((x) => x.length >= min && x.length <= (s.maxLength ?? Infinity));
  if (s.format === 'email') return fit(fc.emailAddress());
  if (s.format === 'date-time') return recentDate.map((d) => d.toISOString());
  if (s.format === 'timezone') return fc.constantFrom(...ZONES);
  if (s.format === 'uri') return fit(fc.webUrl());
  if (s.pattern === '^\\d{4}-\\d{2}-\\d{2}$') return recentDate.map((d) => d.toISOString().slice(0, 10));
  if (s.pattern) return fit(fc.stringMatching(new RegExp(s.pattern)));
  return fc.oneof(fc.string({ minLength: min, maxLength: max }), fc.string({ unit: 'grapheme', minLength: Math.max(min, 1), maxLength: max })).filter((x) => x.length >= min && x.length <= (s.maxLength ?? Infinity));
}

/** A value the schema accepts. */
export function valid(s: Schema, name = '', hints: Hints = {}, depth = 0): Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return fc.oneof(...alts.map((a) => valid(a, name, hints, depth)));
  const types = typesOf(s);
  if (types.length === 0) return fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean());
  return fc.oneof(
    ...types.map((type): Arbitrary<unknown> => {
      switch (type) {
        case 'string':
          return stringArb(s, name, hints);
        case 'integer':
          return hints[name] ?? fc.integer({ min: s.minimum ?? -(2 ** 31), max: s.maximum ?? 2 ** 31 });
        case 'number':
          return hints[name] ?? fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array':
          // A hint may name a whole list (paging's `targets`, `user_ids`).
          return hints[name] ?? fc.array(valid(s.items ?? {}, name, hints, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) });
        case 'object':
          return objectArb(s, hints, depth, false);
        default:
          return fc.constant(null);
      }
    }),
  );
}

/** A value of the wrong kind for the schema (it may occasionally be accepted, which is fine). */
export function invalid(s: Schema): Arbitrary<unknown> {
  const extra: Arbitrary<unknown>[] = [junk];
  if (s.maxLength !== undefined) extra.push(fc.constant('y'.repeat(s.maxLength + 1)));
  if (s.minimum !== undefined) extra.push(fc.constant(s.minimum - 1));
  if (s.maximum !== undefined) extra.push(fc.constant(s.maximum + 1));
  if (s.enum) extra.push(fc.constantFrom(...s.enum.map((e) => `${String(e)}X`), ...s.enum.map((e) => String(e).toUpperCase())));
  return fc.oneof(...extra);
}

/** Mostly valid, sometimes invalid. */
export function mixed(s: Schema, name = '', hints: Hints = {}, depth = 0): Arbitrary<unknown> {
  if (typesOf(s).includes('object') && s.properties) {
    // Whole valid objects often enough that handlers run to the end, fuzzed ones more often.
    const whole = depth === 0 ? [{ weight: 3, arbitrary: valid(s, name, hints, depth) }] : [];
    return fc.oneof(...whole, { weight: 4, arbitrary: objectArb(s, hints, depth, true) }, { weight: 1, arbitrary: invalid(s) });
  }
  return fc.oneof({ weight: 4, arbitrary: valid(s, name, hints, depth) }, { weight: 1, arbitrary: invalid(s) });
}

/** An object: required properties present (sometimes dropped when `fuzzy`), optional ones sometimes, extras sometimes. */
function objectArb(s: Schema, hints: Hints, depth: number, fuzzy: boolean): Arbitrary<Record<string, unknown>> {
  const props = Object.entries(s.properties ?? {});
  if (depth > 3 || props.length === 0) return fc.constant({});
  const required = new Set(s.required ?? []);
  const model: Record<string, Arbitrary<unknown>> = {};
  for (const [k, p] of props) model[k] = fuzzy ? mixed(p, k, hints, depth + 1) : valid(p, k, hints, depth + 1);
  const base = fc.record(model, { requiredKeys: props.filter(([k]) => required.has(k)).map(([k]) => k) });
  if (!fuzzy) return base.filter((o) => Object.keys(o).length >= (s.minProperties ?? 0));
  const extras = fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'id', 'org_id', 'livemode', 'user_id', 'extra', 'role', 'plan'), junk, { maxKeys: 2 });
  return fc
    .tuple(base, fc.boolean(), extras, fc.subarray([...required]))
    .map(([o, addExtras, ex, drop]) => {
      const out: Record<string, unknown> = { ...o };
      for (const k of drop) delete out[k];
      // JSON.parse on the server side turns a "__proto__" key into an own property; test that too.
      if (addExtras) for (const [k, v] of Object.entries(ex)) Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
      return out;
    });
}
