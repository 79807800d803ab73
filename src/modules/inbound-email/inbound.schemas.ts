import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PagingQuery, StringEnum } from '../../lib/schemas.js';

const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

export const ListInboundQuery = Type.Object({
  ...PagingQuery.properties,
  org_id: Type.Optional(Id),
  integration_id: Type.Optional(Id),
  status: Type.Optional(StringEnum(['pending', 'processed', 'failed', 'ignored'], { description: 'failed: could not be processed (see `error`); ignored: automatic mail, kept and never answered' })),
});
export type ListInboundQuery = Static<typeof ListInboundQuery>;

export const InboundEmail = Type.Object(
  {
    id: Type.Integer(),
    org_id: Type.Integer(),
    livemode: Type.Boolean(),
    integration_id: Nullable(Type.Integer({ description: "the integration whose address received it (null: an incident's reply address)" })),
    incident_id: Nullable(Type.Integer({ description: 'the incident it opened, repeated or replied to' })),
    status: StringEnum(['pending', 'processed', 'failed', 'ignored']),
    error: Nullable(Type.String({ description: 'why it failed (after its last try) or was ignored' })),
    attempts: Type.Integer(),
    from: Nullable(Type.String({ description: 'the From: address' })),
    reply_to: Nullable(Type.String({ description: 'where answers go: Reply-To:, else From:' })),
    envelope_from: Type.String({ description: 'the SMTP MAIL FROM (empty for a bounce); not who sent it' }),
    to: Type.String({ description: 'the address it was delivered to' }),
    subject: Nullable(Type.String()),
    message_id: Nullable(Type.String()),
    authenticated: Type.Boolean({ description: 'From: was authenticated (SECURITY.md, mail authentication)' }),
    auth: Nullable(Type.String({ description: 'how From: was or was not authenticated, in one line' })),
    size: Type.Integer({ description: 'bytes of the message as received (0 once retention removed it)' }),
    raw_removed_at: Nullable(Type.String({ description: 'when retention removed the message itself' })),
    received_at: Type.String(),
    processed_at: Nullable(Type.String()),
  },
  { title: 'InboundEmail', description: 'A message the inbound SMTP listener accepted, without its content' },
);
export type InboundEmail = Static<typeof InboundEmail>;

export const InboundEmailList = Type.Object(
  { inbound_emails: Type.Array(InboundEmail), page: Type.Integer(), limit: Type.Integer(), has_more: Type.Boolean() },
  { title: 'InboundEmailList' },
);
