import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { DAY, iso } from '../../lib/clock.js';
import { uploadKeyOf } from '../../lib/storage.js';
import { deleteClosedIncident, oldClosedIncidents } from '../incidents/index.js';
import { metricsOf } from '../metrics/index.js';
import { effectiveRetention, findRetention, findTracksDays, orgAccess } from '../orgs/index.js';
import { sweepTracks } from '../tracks/index.js';
import * as repo from './retention.repository.js';

/** An org's retention as any member may read it, with the instance default beside it. */
export async function getRetention(ctx: AppContext, actor: Actor, slug: string) {
  const { org } = await orgAccess(ctx, actor, { slug });
  return {
    retention: effectiveRetention(ctx, await findRetention(ctx.db, org.id)),
    tracks_days: await findTracksDays(ctx.db, org.id),
    instance_default: { ...ctx.config.ops.retention },
  };
}

export interface SweepCounts {
  signals: number;
  uploads: number;
  audit: number;
  closed_incidents: number;
  /** Received emails deleted, or emptied of the message itself. */
  inbound_emails: number;
  /** Positions of tracks past the org's tracks_days (all of them once it is 0 again). */
  tracks: number;
  /** Entries of the integrations' event logs older than 7 days (issue #37), whatever the org's settings. */
  integration_events: number;
}

/** How long an integration's event log keeps a payload (docs/integrations.md, "Event log"). */
const INTEGRATION_EVENT_DAYS = 7;

const MODES: Mode[] = ['live', 'test'];

/**
 * Deletes what each org's retention no longer keeps: signals, upload files of captures (the
 * signal stays without its image), audit entries, resolved or closed incidents (their received
 * emails go with them by cascade) and received emails, each older than its window. In batches of RETENTION_BATCH rows, one short transaction each, never one huge
 * one; files are removed after their rows' transaction commits. Safe to run on several instances
 * at once (the job also claims its tick): every delete is conditional, and a row counts once.
 */
export async function sweepRetention(ctx: AppContext): Promise<SweepCounts> {
  const counts: SweepCounts = { signals: 0, uploads: 0, audit: 0, closed_incidents: 0, inbound_emails: 0, tracks: 0, integration_events: 0 };
  const now = ctx.clock.now().getTime();
  const batch = ctx.config.ops.retentionBatch;
  for (let after = 0; ; ) {
    const orgs = await repo.orgsWithRetention(ctx.db, after, 200);
    if (orgs.length === 0) break;
    after = orgs[orgs.length - 1]!.id;
    for (const org of orgs) {
      const keep = effectiveRetention(ctx, org);
      const cutoff = (days: number) => iso(new Date(now - days * DAY));
      counts.tracks += await sweepTracks(ctx, org.id, org.tracks_days ?? 0, batch);
      for (const mode of MODES) {
        const scope = { orgIds: [org.id], mode };
        if (keep.signals_days !== null) counts.signals += await sweepSignals(ctx, scope, cutoff(keep.signals_days), batch, counts);
        if (keep.uploads_days !== null) await sweepUploads(ctx, scope, cutoff(keep.uploads_days), batch, counts);
        if (keep.audit_days !== null) counts.audit += await sweepAudit(ctx, scope, cutoff(keep.audit_days), batch);
        if (keep.closed_incidents_days !== null) counts.closed_incidents += await sweepIncidents(ctx, scope, cutoff(keep.closed_incidents_days), batch);
        // A received message holds its attachments as sent (photos with their metadata): it goes
        // by the shorter of its own window and the uploads' (issue 31, F8).
        const mailDays = [keep.inbound_emails_days, keep.uploads_days].filter((d): d is number => d !== null);
        if (mailDays.length > 0) counts.inbound_emails += await sweepInboundEmails(ctx, scope, cutoff(Math.min(...mailDays)), batch);
      }
    }
  }
  // The event logs of integrations: a fixed week for every org, in batches.
  const logCutoff = iso(new Date(now - INTEGRATION_EVENT_DAYS * DAY));
  for (let n = batch; n === batch; counts.integration_events += n) n = await repo.deleteIntegrationEvents(ctx.db, logCutoff, batch);
  const m = metricsOf(ctx).retentionDeleted;
  for (const [kind, n] of Object.entries(counts) as [string, number][]) if (n > 0) m.inc({ kind }, n);
  if (Object.values(counts).some((n) => n > 0)) ctx.log.info({ removed: counts }, 'retention sweep');
  return counts;
}

type Scope = { orgIds: number[]; mode: Mode };

/** Removes the upload files no signal points at any more; answers how many it removed. */
export async function removeUploads(ctx: AppContext, imageUrls: readonly (string | null)[]): Promise<number> {
  let removed = 0;
  for (const url of new Set(imageUrls)) {
    const key = uploadKeyOf(url);
    if (key === undefined || (await repo.imageInUse(ctx.db, url!))) continue;
    await ctx.storage.delete(key);
    removed += 1;
  }
  return removed;
}

async function sweepSignals(ctx: AppContext, scope: Scope, before: string, batch: number, counts: SweepCounts): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await repo.oldSignals(ctx.db, scope, before, batch);
    if (rows.length === 0) return total;
    total += await ctx.transaction((tx) => repo.deleteSignals(tx.db, rows.map((r) => r.id)));
    counts.uploads += await removeUploads(ctx, rows.map((r) => r.image_url));
    if (rows.length < batch) return total;
  }
}

async function sweepUploads(ctx: AppContext, scope: Scope, before: string, batch: number, counts: SweepCounts): Promise<void> {
  for (;;) {
    const rows = await repo.oldUploads(ctx.db, scope, before, batch);
    if (rows.length === 0) return;
    await ctx.transaction((tx) => repo.clearImages(tx.db, rows.map((r) => r.id)));
    counts.uploads += await removeUploads(ctx, rows.map((r) => r.image_url));
    if (rows.length < batch) return;
  }
}

async function sweepAudit(ctx: AppContext, scope: Scope, before: string, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = await repo.oldAuditIds(ctx.db, scope, before, batch);
    if (ids.length === 0) return total;
    total += await ctx.transaction((tx) => repo.deleteAudit(tx.db, ids));
    if (ids.length < batch) return total;
  }
}

async function sweepIncidents(ctx: AppContext, scope: Scope, before: string, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = await oldClosedIncidents(ctx.db, scope, before, batch);
    if (ids.length === 0) return total;
    total += await ctx.transaction(async (tx) => {
      let n = 0;
      for (const id of ids) if (await deleteClosedIncident(tx.db, id)) n += 1;
      return n;
    });
    if (ids.length < batch) return total;
  }
}

/**
 * Received emails past their window: a message that opened or answered an incident keeps its
 * record (reporter, subject, Message-ID: replies and threading need them) without the message
 * itself; any other (ignored, failed) goes whole. Pending ones wait for their processing.
 */
async function sweepInboundEmails(ctx: AppContext, scope: Scope, before: string, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await repo.oldInboundEmails(ctx.db, scope, before, batch);
    if (rows.length === 0) return total;
    const kept = rows.filter((r) => r.status === 'processed' && (r.incident_id ?? r.reply_to_incident_id) !== null).map((r) => r.id);
    const gone = rows.filter((r) => !kept.includes(r.id)).map((r) => r.id);
    const now = iso(ctx.clock.now());
    total += await ctx.transaction(async (tx) => (await repo.deleteInboundEmails(tx.db, gone)) + (await repo.removeInboundRaw(tx.db, kept, now)));
    if (rows.length < batch) return total;
  }
}
