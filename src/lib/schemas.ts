import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** The one error body (docs/api.md, "Errors"). Every route documents it for 4xx and 5xx. */
export const ErrorResponse = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    truncated: Type.Optional(Type.Boolean()),
    upgrade: Type.Optional(Type.Boolean()),
  },
  { $id: 'ErrorResponse', description: 'Error body: `error` is for people, `code` for programs' },
);

/** How the API description names the error body (ErrorResponse serialises it; this documents it). */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'for people; may change' }),
    code: Type.String({ description: 'for programs: `unauthorized`, `forbidden`, `upgrade_required`, `resource_locked`, `not_found`, `conflict`, `slot_unavailable`, `rate_limited`, `internal`...' }),
    upgrade: Type.Optional(Type.Boolean({ description: 'true when a higher plan would allow the request' })),
  },
  { title: 'Error', description: 'Every error answers this body: `error` is for people, `code` for programs.', examples: [{ error: 'Not found', code: 'not_found' }] },
);

/** The 422 body: which field, and why. */
export const ValidationErrorBody = Type.Object(
  {
    error: Type.String(),
    code: Type.Literal('validation_failed'),
    details: Type.Array(Type.Object({ field: Type.String({ description: 'dotted path, e.g. `attendee_email` or `availability.weekly.0.start`' }), message: Type.String() }), {
      maxItems: 20,
    }),
    truncated: Type.Optional(
      Type.Boolean({ description: 'true when there were more problems than listed: at most 20 fields are named, and a large input is checked up to its first problem' }),
    ),
  },
  {
    title: 'ValidationError',
    description: 'The input broke a rule: one entry per field, at most 20 (`truncated` says when there were more).',
    examples: [{ error: 'Validation failed', code: 'validation_failed', details: [{ field: 'title', message: 'is required' }] }],
  },
);

/** A string from a fixed list: one JSON Schema `enum`, so a wrong value gives one clear error. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Paging of every list: `limit` 1..200 (default 50), `page` from 1. */
export const PagingQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
});
export type PagingQuery = Static<typeof PagingQuery>;

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

export const OkResponse = Type.Object({ ok: Type.Boolean() });

export const Email = Type.String({ format: 'email', maxLength: 254, description: 'Compared case-insensitively' });
export const TimeZone = Type.String({ format: 'timezone', maxLength: 64, description: 'IANA time zone name, e.g. Europe/Paris' });
/** E.164: a plus sign and up to 15 digits. */
export const Phone = Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, e.g. +14155550123' });
/** A display name: up to 100 characters, not blank. */
export const PersonName = Type.String({ maxLength: 100, pattern: '\\S' });
