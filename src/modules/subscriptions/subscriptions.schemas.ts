import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../lib/schemas.js';
import { OrgParams } from '../orgs/index.js';
import { SUBSCRIPTION_EVENTS } from './events.js';
import { FORMATS } from './formats.js';

const Url = Type.String({ maxLength: 2048, pattern: '^https?://', description: 'where the events are POSTed: https (http only on an instance whose PUBLIC_URL is http); never a private address unless MUSTER_ALLOW_PRIVATE_WEBHOOKS' });
const Events = Type.Array(StringEnum(SUBSCRIPTION_EVENTS), { minItems: 1, maxItems: SUBSCRIPTION_EVENTS.length, uniqueItems: true, description: 'the events this receiver gets' });
const Format = StringEnum(FORMATS, {
  description: '`standard`: the Standard Webhooks envelope {type, timestamp, data}, signed; `chat`: a Slack incoming-webhook message (Mattermost and Rocket.Chat take it too); `teams`: a Teams Workflows webhook message with an Adaptive Card',
});
const Secret = Type.String({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', maxLength: 100, description: 'format standard only: whsec_ and 24 to 64 bytes in base64; made for you when absent' });
const Description = Type.String({ maxLength: 200 });

export const CreateSubscriptionBody = Type.Object({ url: Url, events: Events, format: Format, secret: Type.Optional(Secret), description: Type.Optional(Description) }, { additionalProperties: false });
export type CreateSubscriptionBody = Static<typeof CreateSubscriptionBody>;

export const UpdateSubscriptionBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    format: Type.Optional(Format),
    secret: Type.Optional(Secret),
    description: Type.Optional(Nullable(Description)),
    enabled: Type.Optional(Type.Boolean({ description: 'true turns on a subscription that a 410 from its receiver turned off' })),
  },
  { minProperties: 1, additionalProperties: false },
);
export type UpdateSubscriptionBody = Static<typeof UpdateSubscriptionBody>;

export const Subscription = Type.Object(
  {
    id: Type.Integer(),
    org_id: Type.Integer(),
    livemode: Type.Boolean(),
    url: Type.String(),
    format: Type.String(),
    events: Type.Array(Type.String()),
    secret: Nullable(Type.String({ description: 'whsec_...: verify `standard` deliveries with it (null for chat and teams)' })),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    disabled_at: Nullable(Type.String()),
    disabled_reason: Nullable(Type.String()),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { title: 'IncidentSubscription' },
);
export type Subscription = Static<typeof Subscription>;

export const SubscriptionList = Type.Object({ data: Type.Array(Subscription) }, { title: 'IncidentSubscriptionList' });
export const SubscriptionParams = Type.Object({ ...OrgParams.properties, id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
export const DeletedSubscription = Type.Object({ id: Type.Integer(), deleted: Type.Boolean() }, { title: 'DeletedIncidentSubscription' });
export const TestResult = Type.Object(
  {
    delivered: Type.Boolean({ description: 'the receiver answered 2xx' }),
    status_code: Nullable(Type.Integer({ description: "the receiver's HTTP status; null when none came (refused address, unreachable, timed out)" })),
    error: Nullable(Type.String()),
    body: Nullable(Type.String({ description: "the start of the receiver's answer (Slack answers ok)" })),
  },
  { title: 'SubscriptionTestResult' },
);
export type TestResult = Static<typeof TestResult>;
