import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../lib/schemas.js';

const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const IntegrationIds = Type.Array(Id, { minItems: 1, maxItems: 100, uniqueItems: true, description: "the integrations it covers (of the org, in the key's mode); absent or null: all of them" });

export const CreateWindowBody = Type.Object({
  start: Type.String({ format: 'date-time' }),
  end: Type.String({ format: 'date-time', description: 'after start, at most 31 days later' }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  integration_ids: Type.Optional(Nullable(IntegrationIds)),
});
export type CreateWindowBody = Static<typeof CreateWindowBody>;

export const UpdateWindowBody = Type.Object(
  {
    start: Type.Optional(Type.String({ format: 'date-time' })),
    end: Type.Optional(Type.String({ format: 'date-time' })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    integration_ids: Type.Optional(Nullable(IntegrationIds)),
  },
  { minProperties: 1 },
);
export type UpdateWindowBody = Static<typeof UpdateWindowBody>;

export const ListWindowsQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'windows ending after this (default: now)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'windows starting before this' })),
});

export const MaintenanceWindow = Type.Object(
  {
    id: Type.Integer(),
    org_id: Type.Integer(),
    livemode: Type.Boolean(),
    start: Type.String(),
    end: Type.String(),
    description: Nullable(Type.String()),
    integration_ids: Nullable(Type.Array(Type.Integer(), { description: 'null: all the org’s integrations' })),
    active: Type.Boolean({ description: 'start <= now < end' }),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { title: 'MaintenanceWindow', description: 'A planned outage: covered integrations answer as usual but open, repeat and page nothing' },
);
export type MaintenanceWindow = Static<typeof MaintenanceWindow>;

export const WindowList = Type.Object({ maintenance_windows: Type.Array(MaintenanceWindow) }, { title: 'MaintenanceWindowList' });
export const WindowParams = Type.Object({ org_slug: Type.String({ minLength: 1, maxLength: 100 }), id: Id });
export const DeletedWindow = Type.Object(
  { ...MaintenanceWindow.properties, deleted: Type.Boolean({ description: 'true: it had not begun (or was over) and is gone; false: it was active and now ends' }) },
  { title: 'DeletedMaintenanceWindow' },
);
