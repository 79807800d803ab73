import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/inbound-email as stored (src/db/schema.ts composes DB from every module's tables).

/** `ignored`: automatic mail (RFC 3834) or a recipient refused beside an accepted one, kept with why, never answered. */
export type InboundEmailStatus = 'pending' | 'processed' | 'failed' | 'ignored';

export interface InboundEmailsTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  integration_id: number | null;
  reply_to_incident_id: number | null;
  mail_from: string;
  rcpt_to: string;
  message_id: string | null;
  /** The received message, base64. */
  raw: string;
  status: InboundEmailStatus;
  attempts: Generated<number>;
  error: string | null;
  incident_id: number | null;
  created_at: string;
  processed_at: string | null;
  /** The From: address (lower case); null on rows received before 0023. */
  sender: string | null;
  /** Where an answer goes: Reply-To:, else From: (lower case). */
  answer_to: string | null;
  subject: string | null;
  /** 1 when From: was authenticated (DMARC alignment through DKIM or SPF, or a trusted relay or forwarder). */
  authenticated: Generated<Flag>;
  /** One line: how From: was or was not authenticated. */
  auth: string | null;
  /** Bytes of the message as received (0 once retention emptied `raw`). */
  size: Generated<number>;
  /** Set when retention emptied `raw`. */
  raw_removed_at: string | null;
}

export interface InboundEmailTables {
  inbound_emails: InboundEmailsTable;
}
