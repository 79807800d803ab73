// The incident page's paging (docs/paging.md): the escalation policy's progress ("Level 2 of 3, next
// in 4 min", the repeat, "Escalation exhausted"), "Escalate now" for who may (the assignee, the
// org's admins and owners; past the last level it starts again, and it takes an acknowledgement
// back), and the paging events of the timeline in words ("Paged Ann (level 1, schedule Primary)",
// "SMS skipped for Ben: phone not verified", "Acknowledged by Ann by SMS").
import { useEffect, useState } from 'preact/hooks';
import { post } from '../../lib/api';
import { useSession } from '../session';
import type { Escalation, Incident, TimelineEvent } from '../types';
import { ErrorAlert, relative } from '../ui';
import type { Directory } from './escalation-policies';

const CHANNEL: Record<string, string> = { push: 'Push', email: 'Email', sms: 'SMS', voice: 'Call' };
const VIA: Record<string, string> = { web: 'on the web', api: 'through the API', push: 'from the push notification', email: 'from the email', sms: 'by SMS', voice: 'by phone call' };

/** "schedule Primary", "team Pipe crew"; a person target says nothing more than the person paged. */
function targetWords(target: unknown, dir: Directory | undefined): string | null {
  if (!target || typeof target !== 'object') return null;
  const t = target as { type?: unknown; id?: unknown };
  if (t.type === 'schedule') return `schedule ${dir?.schedules.find((s) => s.id === t.id)?.name ?? String(t.id)}`;
  if (t.type === 'team') return `team ${dir?.teams.find((x) => x.id === t.id)?.name ?? String(t.id)}`;
  if (t.type === 'nearest') return 'nearest by position';
  return null;
}

/** ": nobody is on call in schedule “Primary”": the API's reason, with the schedules it names by id named. */
function reasonWords(reason: unknown, dir: Directory | undefined): string {
  if (typeof reason !== 'string' || !reason) return '';
  return `: ${reason.replace(/schedule (\d+)/g, (all, id: string) => {
    const s = dir?.schedules.find((x) => x.id === Number(id));
    return s ? `schedule “${s.name}”` : all;
  })}`;
}

/**
 * A paging event in words, naming its people itself (so the timeline leaves out the actor), or
 * null for any other event. `name` turns a user id into a name.
 */
export function describePaging(e: TimelineEvent, name: (id: unknown) => string, dir: Directory | undefined): string | null {
  const d = e.data;
  const type = e.type as string;
  const loop = typeof d.loop === 'number' && d.loop > 0 ? `, repeat ${d.loop}` : '';
  switch (type) {
    case 'paged': {
      const far = typeof d.distance_m === 'number' ? (d.distance_m < 1000 ? `${d.distance_m} m away` : `${(d.distance_m / 1000).toFixed(1)} km away`) : null;
      const how = [typeof d.level === 'number' ? `level ${d.level}${loop}` : 'by hand', targetWords(d.target, dir), far].filter(Boolean).join(', ');
      return `Paged ${name(d.user_id)} (${how})`;
    }
    case 'notified': {
      const channel = CHANNEL[String(d.channel)] ?? String(d.channel);
      const reason = typeof d.reason === 'string' && d.reason ? `: ${d.reason}` : '';
      if (d.outcome === 'sent') return `${channel} sent to ${name(d.user_id)}`;
      if (d.outcome === 'failed') return `${channel} to ${name(d.user_id)} failed${reason}`;
      return `${channel} skipped for ${name(d.user_id)}${reason}`;
    }
    case 'escalated':
      // The org's built-in escalation (no policy) names its step and timeout; a policy's names the level.
      if (typeof d.timeout_minutes === 'number') return `Escalated (step ${String(d.level)}): not acknowledged within ${d.timeout_minutes} min`;
      if (d.by_hand) return `Escalated to level ${String(d.level)}${loop} by ${e.actor?.user_name ?? 'hand'}`;
      return `Escalated to level ${String(d.level)}${loop}: nobody acknowledged in time`;
    case 'escalation_skipped':
      return `Level ${String(d.level)}${loop} skipped${reasonWords(d.reason, dir)}`;
    case 'escalation_exhausted':
      return `Escalation exhausted${reasonWords(d.reason, dir)}`;
    case 'acknowledged': {
      const who = e.actor?.user_name ?? (typeof d.user_id === 'number' ? name(d.user_id) : null);
      const via = typeof d.via === 'string' ? VIA[d.via] : undefined;
      return `Acknowledged${who ? ` by ${who}` : ''}${via ? ` ${via}` : ''}`;
    }
    default:
      return null;
  }
}

/** Re-renders every `ms` so "next in 4 min" stays true. */
function useNow(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/** Where the walk is, in words: the level, the repeat, what comes next or why it stopped. */
export function progressInWords(esc: Escalation, incident: Incident, exhausted: boolean, now: number): { text: string; state: 'running' | 'waiting' | 'acknowledged' | 'stopped' | 'exhausted' } {
  const where = esc.level === 0 ? `Level 1 of ${esc.levels} about to fire` : `Level ${esc.level} of ${esc.levels}`;
  const round = esc.repeat > 0 ? (esc.loop > 0 ? ` (repeat ${esc.loop} of ${esc.repeat})` : ` (then repeats ${esc.repeat === 1 ? 'once' : `${esc.repeat} times`})`) : '';
  if (incident.status === 'resolved' || incident.status === 'closed') return { text: `${where}${round}: stopped, the incident is ${incident.status}`, state: 'stopped' };
  if (incident.acknowledged_at) return { text: `${where}${round}: stopped, acknowledged`, state: 'acknowledged' };
  if (exhausted) return { text: 'Escalation exhausted: nobody acknowledged', state: 'exhausted' };
  if (esc.next_at) {
    const next = relative(esc.next_at, now);
    return { text: `${where}${round}, next ${next.startsWith('in ') || next.startsWith('on ') ? next : 'any moment'}`, state: 'running' };
  }
  return { text: `${where}${round}: normal and low incidents page level 1 only`, state: 'waiting' };
}

/** Whether the escalation ran out: its last walk event is `escalation_exhausted` (a restart pages again after it). */
export function isExhausted(events: TimelineEvent[] | undefined): boolean {
  const walk = (events ?? []).filter((e) => ['paged', 'escalated', 'escalation_exhausted'].includes(e.type as string) && (e.type !== 'paged' || typeof e.data.level === 'number'));
  return walk[walk.length - 1]?.type === ('escalation_exhausted' as string);
}

export function EscalationCard({ incident, events, onChange }: { incident: Incident; events: TimelineEvent[] | undefined; onChange: (i: Incident) => void }) {
  const { me, orgs } = useSession();
  const now = useNow(15_000);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const esc = incident.escalation;
  if (!esc) return null;
  const role = orgs.find((o) => o.id === incident.org_id)?.role;
  const may = role === 'owner' || role === 'admin' || incident.assignee_id === me.id;
  const progress = progressInWords(esc, incident, isExhausted(events), now);
  const escalate = async () => {
    // As PagerDuty's escalate: an acknowledged incident is taken back and the next level paged.
    if (incident.acknowledged_at && !confirm('Escalate now? The acknowledgement is taken back and the next level is paged.')) return;
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      const updated = await post<Incident>(`/v1/tickets/${incident.Id}/escalate`);
      onChange(updated);
      setNote(updated.escalation ? `Escalated: level ${updated.escalation.level} paged.` : 'Escalated.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card stack" data-testid="escalation-card">
      <h2>Escalation</h2>
      <p class="muted small">
        Policy <strong>{esc.policy_name}</strong>
      </p>
      <p class={`escalation-state ${progress.state}`} data-testid="escalation-progress" data-state={progress.state}>
        {progress.text}
      </p>
      <ErrorAlert error={error} />
      {note ? (
        <p class="saved-note" role="status" data-testid="escalate-saved">
          {note}
        </p>
      ) : null}
      {may && progress.state !== 'stopped' ? (
        <button type="button" class="secondary" disabled={busy} onClick={() => void escalate()} data-testid="escalate-now">
          {busy ? 'Escalating…' : 'Escalate now'}
        </button>
      ) : null}
    </div>
  );
}
