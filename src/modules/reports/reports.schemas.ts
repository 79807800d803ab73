import { Type } from '@sinclair/typebox';
import { Nullable } from '../../lib/schemas.js';

export const VisitsParams = Type.Object({ org_slug: Type.String() });
export const VisitsQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ description: 'ISO-8601; default `to` minus 7 days' })),
    to: Type.Optional(Type.String({ description: 'ISO-8601; default now; at most 92 days after `from`' })),
  },
  { additionalProperties: false },
);

const Visit = Type.Object({
  arrived_at: Nullable(Type.String({ description: 'null: arrived before the range' })),
  departed_at: Nullable(Type.String({ description: 'null: still there, or left after the range' })),
  duration_seconds: Nullable(Type.Integer()),
});

export const VisitsReportSchema = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    sites: Type.Array(
      Type.Object({
        user_id: Nullable(Type.Integer()),
        user_name: Nullable(Type.String()),
        device_id: Nullable(Type.String()),
        site_id: Nullable(Type.Integer()),
        site_name: Nullable(Type.String()),
        visits: Type.Array(Visit),
        total_seconds: Type.Integer(),
      }),
    ),
    incidents: Type.Array(
      Type.Object({
        incident_id: Type.Integer(),
        title: Type.String(),
        user_id: Nullable(Type.Integer()),
        user_name: Nullable(Type.String()),
        visits: Type.Array(Visit),
        total_seconds: Type.Integer(),
      }),
    ),
  },
  { title: 'VisitsReport' },
);
