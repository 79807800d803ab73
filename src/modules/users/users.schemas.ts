import { Type, type Static } from '@sinclair/typebox';
import { Email, Nullable, StringEnum, PagingQuery, PersonName, Phone, TimeZone } from '../../lib/schemas.js';

export const PlanSchema = StringEnum(['free', 'starter', 'agency', 'enterprise']);

export const CreateUserBody = Type.Object({
  email: Email,
  password: Type.String({ minLength: 8, maxLength: 1024, description: 'At least 8 characters' }),
  name: PersonName,
  timezone: Type.Optional(TimeZone),
  invite_token: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: 'The token of an invite link to this address: proves the address and joins the org' }),
  ),
});
export type CreateUserBody = Static<typeof CreateUserBody>;

/** The registration answer of the spec: {id, email, name, slug, plan} plus the time zone. */
export const UserResponse = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  plan: PlanSchema,
  timezone: Type.String(),
}, { title: 'User', description: 'A user as registration answers it' });

/** What the signed-in user sees of themselves. */
export const MeResponse = Type.Object({
  ...UserResponse.properties,
  phone: Nullable(Type.String()),
  phone_verified: Type.Boolean({ description: 'The number is proven by its SMS code (POST /v1/auth/me/phone/verify): paging sends SMS and calls only to a proven number' }),
  admin: Type.Boolean(),
  email_verified: Type.Boolean({ description: 'The address is proven (confirmation code, magic or reset code, invite link, an admin)' }),
  livemode: Type.Boolean({ description: 'false when the request used an sk_test_ key' }),
}, { title: 'Me', description: 'The signed-in user' });
export type MeResponse = Static<typeof MeResponse>;

export const UpdateMeBody = Type.Object(
  {
    name: Type.Optional(PersonName),
    timezone: Type.Optional(TimeZone),
    // A new number is stored unproven and gets a six-digit code by SMS (POST /v1/auth/me/phone/verify).
    phone: Type.Optional(Nullable(Phone)),
    password: Type.Optional(Type.Unknown({ description: 'Not accepted here (422): use POST /v1/auth/password' })),
  },
  { minProperties: 1 },
);
export type UpdateMeBody = Static<typeof UpdateMeBody>;

export const AdminUser = Type.Object({
  ...UserResponse.properties,
  phone: Nullable(Type.String()),
  phone_verified: Type.Boolean(),
  admin: Type.Boolean(),
  email_verified: Type.Boolean(),
  created_at: Type.String(),
}, { title: 'AdminUser', description: 'A user as instance admins see them' });
export type AdminUser = Static<typeof AdminUser>;

export const ListUsersQuery = PagingQuery;
export const ListUsersResponse = Type.Object({
  users: Type.Array(AdminUser),
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
}, { title: 'UserList' });

export const AdminUpdateUserBody = Type.Object(
  { plan: Type.Optional(PlanSchema), email_verified: Type.Optional(Type.Boolean()) },
  { minProperties: 1 },
);
export type AdminUpdateUserBody = Static<typeof AdminUpdateUserBody>;

export const InstanceSettings = Type.Object(
  { default_plan: PlanSchema },
  { title: 'InstanceSettings', description: "The instance's settings an admin changes on the admin page" },
);
export const UpdateInstanceSettingsBody = Type.Object({ default_plan: Type.Optional(PlanSchema) }, { minProperties: 1 });

export const PublicProfile = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  timezone: Type.String(),
  event_types: Type.Array(
    Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      slug: Type.String(),
      duration_minutes: Type.Integer(),
      location_type: Type.String(),
    }),
  ),
}, { title: 'PublicProfile', description: 'What anyone sees of a user: the public event types' });
export type PublicProfile = Static<typeof PublicProfile>;

export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 100 }) });
