import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { isTimeZone } from '../lib/timezone.js';

// ajv-formats is CommonJS with a default export; under NodeNext its callable sits on .default.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default;

function makeAjv(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addFormat('timezone', { type: 'string', validate: isTimeZone });
  return ajv;
}

/**
 * Query strings, params and headers are text, so they are coerced ("5" -> 5). JSON bodies are not:
 * `{"name": 42}` is a 422, not silently "42".
 */
export function installValidators(app: FastifyInstance): void {
  const strict = makeAjv(false);
  const coercing = makeAjv('array');
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object),
  );
}
