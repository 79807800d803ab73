import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { flag, type DB, type Mode } from '../../db/schema.js';

/**
 * Everything stored about one user, for their export. Each query names the user (or their proven
 * address) directly, never an org: the export is the person's own, across orgs. Records that carry
 * a mode are those of the credential's mode (test-mode data only through a test key, as everywhere).
 */
/** A JSON column's value; text that is not JSON (never written so) is kept as the text. */
const json = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** Every row the export shows, JSON columns (the meta of signals and audit entries) read as values. */
export async function exportRows(db: Kysely<DB>, userId: number, email: string, emailProven: boolean, mode: Mode) {
  const livemode = flag(mode === 'live');
  const [memberships, teams, apiKeys, sessions, devices, push, calendars, incidents, replies, signals, eventTypes, hosted, attending, audit, inbound] = await Promise.all([
    db
      .selectFrom('memberships')
      .innerJoin('orgs', 'orgs.id', 'memberships.org_id')
      .select(['orgs.id as org_id', 'orgs.name as org_name', 'orgs.slug as org_slug', 'memberships.role', 'memberships.is_primary', 'memberships.created_at'])
      .where('memberships.user_id', '=', userId)
      .orderBy('orgs.id')
      .execute(),
    db
      .selectFrom('team_members')
      .innerJoin('teams', 'teams.id', 'team_members.team_id')
      .select(['teams.id as team_id', 'teams.org_id', 'teams.name', 'team_members.active', 'team_members.created_at'])
      .where('team_members.user_id', '=', userId)
      .execute(),
    // As GET /v1/api-keys: a test credential sees only test keys (a leaked sk_test_ key learns nothing live).
    db
      .selectFrom('api_keys')
      .select(['id', 'name', 'mode', 'last4', 'created_at', 'revoked_at'])
      .where('user_id', '=', userId)
      .where('mode', 'in', mode === 'test' ? ['test'] : ['live', 'test'])
      .orderBy('id')
      .execute(),
    db.selectFrom('sessions').select(['created_at', 'expires_at']).where('user_id', '=', userId).orderBy('created_at').execute(),
    db
      .selectFrom('devices')
      .select(['id', 'org_id', 'livemode', 'name', 'device_id', 'created_at', 'last_seen_at', 'revoked_at'])
      .where('user_id', '=', userId)
      .where('livemode', '=', livemode)
      .orderBy('id')
      .execute(),
    db.selectFrom('push_subscriptions').select(['endpoint', 'created_at']).where('user_id', '=', userId).where('livemode', '=', livemode).orderBy('id').execute(),
    db
      .selectFrom('calendar_connections')
      .select(['id', 'kind', 'name', 'url', 'username', 'status', 'last_synced_at', 'created_at'])
      .where('user_id', '=', userId)
      .where('livemode', '=', livemode)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('incidents')
      .select(['id', 'org_id', 'livemode', 'title', 'description', 'status', 'priority', 'source', 'lat', 'lng', 'location_name', 'created_at', 'resolved_at'])
      .where('creator_id', '=', userId)
      .where('livemode', '=', livemode)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('replies')
      .innerJoin('incidents', 'incidents.id', 'replies.incident_id')
      .select(['replies.id', 'replies.incident_id', 'replies.body', 'replies.public', 'replies.created_at'])
      .where('replies.author_id', '=', userId)
      .where('incidents.livemode', '=', livemode)
      .orderBy('replies.id')
      .execute(),
    db
      .selectFrom('signals')
      .select(['id', 'org_id', 'livemode', 'type', 'lat', 'lng', 'accuracy', 'note', 'image_url', 'ticket_id', 'meta', 'created_at'])
      .where('user_id', '=', userId)
      .where('livemode', '=', livemode)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('event_types')
      .select(['id', 'org_id', 'team_id', 'livemode', 'name', 'slug', 'description', 'duration_minutes', 'location_type', 'created_at'])
      .where('owner_id', '=', userId)
      .where('livemode', '=', livemode)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('bookings')
      .select(['id', 'event_type_id', 'livemode', 'status', 'attendee_name', 'attendee_email', 'start_time', 'end_time', 'notes', 'timezone', 'created_at'])
      .where('host_id', '=', userId)
      .where('livemode', '=', livemode)
      .orderBy('start_time')
      .execute(),
    // Bookings made with the person's address: only once the address is proven, or anyone could
    // register it unproven and read what its owner booked.
    emailProven
      ? db
          .selectFrom('bookings')
          .select(['id', 'host_id', 'livemode', 'status', 'attendee_name', 'start_time', 'end_time', 'notes', 'timezone', 'created_at'])
          .where(sql`lower(attendee_email)`, '=', email.toLowerCase())
          .where('livemode', '=', livemode)
          .orderBy('start_time')
          .execute()
      : Promise.resolve([]),
    db
      .selectFrom('audit_log')
      .select(['id', 'org_id', 'livemode', 'action', 'device_id', 'meta', 'created_at'])
      .where('user_id', '=', userId)
      .where('livemode', '=', livemode)
      .orderBy('id')
      .execute(),
    // Mail received from the person's address (its From:), as bookings: only once the address is proven.
    emailProven
      ? db
          .selectFrom('inbound_emails')
          .select(['id', 'org_id', 'livemode', 'rcpt_to', 'subject', 'message_id', 'status', 'incident_id', 'reply_to_incident_id', 'created_at', 'raw', 'raw_removed_at'])
          .where('sender', '=', email.toLowerCase())
          .where('livemode', '=', livemode)
          .orderBy('id')
          .execute()
      : Promise.resolve([]),
  ]);
  return {
    memberships,
    teams,
    apiKeys,
    sessions,
    devices,
    push,
    calendars,
    incidents,
    replies,
    signals: signals.map((r) => ({ ...r, meta: json(r.meta) })),
    eventTypes,
    hosted,
    attending,
    audit: audit.map((r) => ({ ...r, meta: json(r.meta) })),
    inbound,
  };
}

/** Every org the user is a member of. */
export async function orgIdsOf(db: Kysely<DB>, userId: number): Promise<number[]> {
  return (await db.selectFrom('memberships').select('org_id').where('user_id', '=', userId).execute()).map((r) => r.org_id);
}

/** Orgs the user owns, with how many other members and other owners each has. */
export async function ownedOrgs(db: Kysely<DB>, userId: number) {
  return db
    .selectFrom('memberships as mine')
    .innerJoin('orgs', 'orgs.id', 'mine.org_id')
    .select((eb) => [
      'orgs.id',
      'orgs.slug',
      eb.selectFrom('memberships as m').select(eb.fn.countAll<number>().as('n')).whereRef('m.org_id', '=', 'mine.org_id').where('m.user_id', '<>', userId).as('others'),
      eb
        .selectFrom('memberships as m')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('m.org_id', '=', 'mine.org_id')
        .where('m.user_id', '<>', userId)
        .where('m.role', '=', 'owner')
        .as('other_owners'),
    ])
    .where('mine.user_id', '=', userId)
    .where('mine.role', '=', 'owner')
    .execute();
}

/** Orgs in which the user is the only member (their personal org, and any they never shared). */
export async function soleMemberOrgs(db: Kysely<DB>, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('memberships as mine')
    .select('mine.org_id')
    .where('mine.user_id', '=', userId)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('memberships as m').select('m.user_id').whereRef('m.org_id', '=', 'mine.org_id').where('m.user_id', '<>', userId))))
    .execute();
  return rows.map((r) => r.org_id);
}

export async function signalImagesOf(db: Kysely<DB>, userId: number, orgId?: number): Promise<string[]> {
  let q = db.selectFrom('signals').select('image_url').where('user_id', '=', userId).where('image_url', 'is not', null);
  if (orgId !== undefined) q = q.where('org_id', '=', orgId);
  return (await q.execute()).map((r) => r.image_url!);
}

/** Images of captures in these orgs (deleted with the org). */
export async function orgImages(db: Kysely<DB>, orgIds: readonly number[]): Promise<string[]> {
  if (orgIds.length === 0) return [];
  return (await db.selectFrom('signals').select('image_url').where('org_id', 'in', orgIds).where('image_url', 'is not', null).execute()).map((r) => r.image_url!);
}

export async function deleteSignalsOf(db: Kysely<DB>, userId: number, orgId?: number): Promise<number> {
  let q = db.deleteFrom('signals').where('user_id', '=', userId);
  if (orgId !== undefined) q = q.where('org_id', '=', orgId);
  return Number((await q.executeTakeFirst()).numDeletedRows);
}

export async function keyIdsOf(db: Kysely<DB>, userId: number): Promise<number[]> {
  return (await db.selectFrom('api_keys').select('id').where('user_id', '=', userId).execute()).map((r) => r.id);
}

/** The condition "this org (`orgs`) has no member". */
const withoutMembers = (eb: ExpressionBuilder<DB, 'orgs'>) => eb.not(eb.exists(eb.selectFrom('memberships as m').select('m.user_id').whereRef('m.org_id', '=', 'orgs.id')));

/** Orgs without a single member (in `among` when given), lowest ids first. */
export async function memberlessOrgIds(db: Kysely<DB>, among: readonly number[] | undefined, limit: number): Promise<number[]> {
  if (among?.length === 0) return [];
  let q = db
    .selectFrom('orgs')
    .select('orgs.id')
    .where(withoutMembers)
    .orderBy('orgs.id')
    .limit(limit);
  if (among) q = q.where('orgs.id', 'in', among);
  return (await q.execute()).map((r) => r.id);
}

/**
 * Deletes those of these orgs that still have no member, with everything in them; answers the ids
 * deleted. The condition is part of the DELETE, so an org someone joined in the meantime stays.
 */
export async function deleteOrgsWithoutMembers(db: Kysely<DB>, orgIds: readonly number[]): Promise<number[]> {
  if (orgIds.length === 0) return [];
  const rows = await db
    .deleteFrom('orgs')
    .where('id', 'in', orgIds)
    .where(withoutMembers)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Removes the account. Sessions, keys, devices, push subscriptions, calendar connections,
 * memberships, event types and hosted bookings go with the user row (ON DELETE CASCADE);
 * incidents and audit entries keep their row with the person's id cleared (SET NULL); replies are
 * marked so their author shows as "Deleted user". Codes, invites and queued emails to the address go too,
 * and every stored report answer (modules/reports, stored-results.ts): one may name the person (an
 * assignee, a person on call, in any org they ever served), and each is computed again when next asked.
 */
export async function deleteAccount(db: Kysely<DB>, user: { id: number; email: string }): Promise<boolean> {
  await db.updateTable('replies').set({ author_deleted: 1 }).where('author_id', '=', user.id).execute();
  await db.deleteFrom('report_results').execute();
  await db.deleteFrom('magic_codes').where('email', 'in', [user.email, `phone:${user.id}`]).execute();
  await db.deleteFrom('org_invites').where('email', '=', user.email).execute();
  await db.deleteFrom('outbox').where('user_id', '=', user.id).execute();
  const r = await db.deleteFrom('users').where('id', '=', user.id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}
