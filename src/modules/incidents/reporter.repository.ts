import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

// The reporter of an incident opened by email, read from what modules/inbound-email received
// (inbound_emails): whom a public reply is mailed to, and the thread it joins.

/** Who reported an incident by email: the From: (and Reply-To:) of the first message that opened or joined it. */
export async function reporterOf(db: Kysely<DB>, incidentId: number): Promise<{ sender: string; answerTo: string } | undefined> {
  const r = await db
    .selectFrom('inbound_emails')
    .select(['sender', 'answer_to', 'mail_from'])
    .where('incident_id', '=', incidentId)
    .where('integration_id', 'is not', null)
    .where('status', '=', 'processed')
    .orderBy('id')
    .executeTakeFirst();
  if (!r) return undefined;
  // Rows received before migration 0023 know only the envelope.
  const sender = r.sender ?? r.mail_from.toLowerCase();
  return { sender, answerTo: r.answer_to ?? sender };
}

/**
 * The Message-IDs an email to the reporter threads under: the reporter's first message and the
 * latest message of the thread that Muster received (their report, a repeat, or a reply by email).
 */
export async function threadIds(db: Kysely<DB>, incidentId: number): Promise<{ first: string; latest: string } | undefined> {
  const base = db
    .selectFrom('inbound_emails')
    .select('message_id')
    .where('status', '=', 'processed')
    .where('message_id', 'is not', null)
    .where((eb) => eb.or([eb('incident_id', '=', incidentId), eb('reply_to_incident_id', '=', incidentId)]));
  const first = await base.where('integration_id', 'is not', null).orderBy('id').limit(1).executeTakeFirst();
  if (!first?.message_id) return undefined;
  const latest = await base.orderBy('id', 'desc').limit(1).executeTakeFirst();
  return { first: first.message_id, latest: latest?.message_id ?? first.message_id };
}

/** In-Reply-To and References for an email to the reporter (issue 32): their first message and the latest of the thread. */
export async function reporterThread(db: Kysely<DB>, incidentId: number): Promise<{ inReplyTo: string; references: string[] } | undefined> {
  const ids = await threadIds(db, incidentId);
  if (!ids) return undefined;
  return { inReplyTo: ids.latest, references: ids.first === ids.latest ? [ids.first] : [ids.first, ids.latest] };
}
