import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { isTimeZone } from '../lib/timezone.js';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on .default.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default;

const validator = (f: unknown) => (typeof f === 'object' && f !== null && 'validate' in f ? (f as { validate: (s: string) => boolean }).validate : (f as (s: string) => boolean));
const isDay = validator(fullFormats.date);
const isDateTime = validator(fullFormats['date-time']);

function makeAjv(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addFormat('timezone', { type: 'string', validate: isTimeZone });
  // A calendar day (YYYY-MM-DD) or an RFC 3339 date-time: list filters accept either (ISO 8601).
  ajv.addFormat('date-or-date-time', { type: 'string', validate: (s: string) => isDay(s) || isDateTime(s) });
  return ajv;
}

/**
 * Query strings, params and headers are text, so they are coerced ("5" -> 5). JSON bodies are not:
 * `{"name": 42}` is a 422, not silently "42".
 */
let shared: { strict: Ajv; coercing: Ajv } | undefined;

/**
 * One pair of Ajv instances per process: Ajv keeps what it compiled keyed by the schema object, and
 * the route schemas are module constants, so every app this process builds after the first (the
 * tests build hundreds) reuses the validators instead of compiling them again.
 */
export function installValidators(app: FastifyInstance): void {
  shared ??= { strict: makeAjv(false), coercing: makeAjv('array') };
  const { strict, coercing } = shared;
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object),
  );
}
