import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** The one error body of spec/decisions.md. Every route documents it for 4xx and 5xx. */
export const ErrorResponse = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    upgrade: Type.Optional(Type.Boolean()),
  },
  { $id: 'ErrorResponse', description: 'Error body: `error` is for people, `code` for programs' },
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
