import { metricsOf } from '../modules/metrics/index.js';
import type { AppContext } from '../context.js';
import { iso } from '../lib/clock.js';
import { zonedWords } from '../lib/zoned-time.js';
import { queueEmail } from '../modules/deliveries/index.js';
import { claimSlaMark, dueSlaMarks, recordTimeline, replyAddress, type SlaMark } from '../modules/incidents/index.js';

const BATCH = 500;

function emailFor(ctx: AppContext, m: SlaMark, kind: 'warning' | 'breach') {
  const url = `${ctx.config.publicUrl}/app/incidents/${m.id}`;
  const due = zonedWords(m.sla_due_at, m.recipient_timezone);
  const subject =
    kind === 'warning' ? `SLA warning: "${m.title}" is due at ${due.time} (${due.zone})` : `SLA breached: "${m.title}" was due at ${due.time} (${due.zone})`;
  const text = `${subject}\n\nPriority: ${m.priority}\nDue: ${due.full} ${due.zone} (${m.sla_due_at})\n\n${url}`;
  return { to: m.recipient_email!, replyTo: replyAddress(ctx, m.id), subject, text, topic: `incident.sla_${kind}`, userId: m.recipient_id, orgId: m.org_id, mode: m.livemode === 1 ? ('live' as const) : ('test' as const) };
}

/**
 * Queues the SLA warning and breach emails of open incidents, once each: a mark is claimed with a
 * conditional update in the same transaction as its email, so two sweepers (or two instances)
 * never send one twice. An incident found already past due gets only the breach email.
 * Returns how many of each were queued.
 */
export async function sweepSla(ctx: AppContext): Promise<{ warnings: number; breaches: number }> {
  const now = iso(ctx.clock.now());
  const counts = { warnings: 0, breaches: 0 };
  for (const kind of ['breach', 'warning'] as const) {
    for (const mark of await dueSlaMarks(ctx.db, kind, now, BATCH)) {
      await ctx.transaction(async (tx) => {
        if (!(await claimSlaMark(tx.db, mark.id, kind, now))) return;
        if (mark.recipient_email) await queueEmail(ctx, tx, emailFor(ctx, mark, kind));
        await recordTimeline(ctx, tx, mark, kind === 'warning' ? 'sla_warning' : 'sla_breached', null, { sla_due_at: mark.sla_due_at, notified_user_id: mark.recipient_id });
        counts[kind === 'warning' ? 'warnings' : 'breaches'] += 1;
        if (kind === 'breach') tx.onCommit(() => metricsOf(ctx).slaBreaches.inc());
      });
    }
  }
  return counts;
}
