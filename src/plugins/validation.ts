import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { storableTime } from '../lib/clock.js';
import { isTimeZone } from '../lib/timezone.js';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on .default.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default;

const validator = (f: unknown) => (typeof f === 'object' && f !== null && 'validate' in f ? (f as { validate: (s: string) => boolean }).validate : (f as (s: string) => boolean));
const isDay = validator(fullFormats.date);
/**
 * RFC 3339 date-times that JavaScript can also read: RFC 3339 allows a leap second (23:59:60),
 * which Date.parse cannot read, and years a stored time cannot hold; both were 500s (issue #31, F5).
 */
const isDateTime = (s: string) => validator(fullFormats['date-time'])(s) && storableTime(Date.parse(s));

function makeAjv(coerceTypes: Options['coerceTypes'], allErrors: boolean): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors, strict: false });
  addFormats(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  ajv.addFormat('timezone', { type: 'string', validate: isTimeZone });
  // A calendar day (YYYY-MM-DD) or an RFC 3339 date-time: list filters accept either (ISO 8601).
  ajv.addFormat('date-or-date-time', { type: 'string', validate: (s: string) => isDay(s) || isDateTime(s) });
  return ajv;
}

/** At most this many problems are reported in a 422; more set `truncated: true` (docs/api.md, Errors). */
export const MAX_DETAILS = 20;
/**
 * Input with more JSON values than this is reported up to its first problem only. Every problem
 * of a large input is a large answer: 340,000 `{}` in a 1 MiB body were 1,020,004 details and a
 * 68.7 MB 422 (issue #31, F2). Under it, all problems are found (for the first MAX_DETAILS fields).
 */
export const FULL_CHECK_VALUES = 1_000;

/** The error lists that stopped before every problem was found: the 422 says `truncated: true`. */
export const partialErrors = new WeakSet<object>();

/** Whether `data` holds at most `limit` JSON values (objects, arrays, scalars), counted without recursion. */
function within(data: unknown, limit: number): boolean {
  const stack: unknown[] = [data];
  let n = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    if (++n > limit) return false;
    if (v !== null && typeof v === 'object') for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push(x);
  }
  return true;
}

type Validate = ((data: unknown, cxt?: Parameters<ValidateFunction>[1]) => boolean) & { errors?: ErrorObject[] | null; schemaEnv?: unknown };

/**
 * A route's validator: ajv stopping at the first problem, which is all a valid request costs.
 * Only when that fails, and the input is small, a second validator (compiled on first use) lists
 * every problem; a large invalid input answers its first problem, marked as partial.
 * The first validator too is compiled on the route's first request, not at start: compiling every
 * route's schemas was most of an app's start (about 0.75 s of CPU of 1.2 s for ~250 routes), paid
 * by every server start and every test file, most of which use a few routes. Every schema is still
 * compiled and checked by the tests that call each documented operation (test/operations.test.ts,
 * the fuzz suite).
 */
function bounded(schema: object, first: Ajv, all: Ajv): Validate {
  let quick: ValidateFunction | undefined;
  let thorough: ValidateFunction | undefined;
  const validate: Validate = (data, cxt) => {
    quick ??= first.compile(schema);
    if (quick(data, cxt)) {
      validate.errors = null;
      return true;
    }
    if (within(data, FULL_CHECK_VALUES)) {
      thorough ??= all.compile(schema);
      if (!thorough(data, cxt) && thorough.errors?.length) {
        validate.errors = thorough.errors;
        return false;
      }
    }
    const errors = quick.errors ?? [];
    partialErrors.add(errors);
    validate.errors = errors;
    return false;
  };
  // Fastify passes the parent of the root (so ajv may replace the root: a coerced value) to validators
  // with a `schemaEnv`, as every function ajv compiles has; this one has one before it is compiled.
  validate.schemaEnv = true;
  return validate;
}

/**
 * Query strings, params and headers are text, so they are coerced ("5" -> 5). JSON bodies are not:
 * `{"name": 42}` is a 422, not silently "42".
 */
let shared: { strict: [Ajv, Ajv]; coercing: [Ajv, Ajv] } | undefined;

/**
 * One set of Ajv instances per process: Ajv keeps what it compiled keyed by the schema object, and
 * the route schemas are module constants, so every app this process builds after the first (the
 * tests build hundreds) reuses the validators instead of compiling them again.
 */
export function installValidators(app: FastifyInstance): void {
  shared ??= { strict: [makeAjv(false, false), makeAjv(false, true)], coercing: [makeAjv('array', false), makeAjv('array', true)] };
  const { strict, coercing } = shared;
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) => {
    const [first, all] = httpPart === 'body' ? strict : coercing;
    return bounded(schema, first, all);
  });
}
