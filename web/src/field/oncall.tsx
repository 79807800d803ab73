// "You are on call until ..." and the next shift, from the person's shifts of the next 31 days
// (GET /v1/auth/me/shifts). Nothing is shown to someone with no shift; offline, nothing either.
import { useEffect, useState } from 'preact/hooks';
import { get } from '../lib/api';
import { formatDateTime } from '../lib/format';
import type { MyShift } from './types';

const AHEAD = 31 * 86_400_000;

/** Contiguous shifts (one schedule's layer then an override, say) read as one time on call. */
function joined(list: MyShift[]): MyShift[] {
  const out: MyShift[] = [];
  for (const s of list) {
    const last = out[out.length - 1];
    if (last && last.end === s.start && last.schedule.id === s.schedule.id) out[out.length - 1] = { ...last, end: s.end };
    else out.push(s);
  }
  return out;
}

export function OnCallPanel() {
  const [shifts, setShifts] = useState<MyShift[] | null>(null);
  const [to] = useState(() => new Date(Date.now() + AHEAD).toISOString());
  useEffect(() => {
    get<{ shifts: MyShift[] }>(`/v1/auth/me/shifts?from=${encodeURIComponent(new Date().toISOString())}&to=${encodeURIComponent(to)}`).then(
      (r) => setShifts(joined(r.shifts)),
      () => setShifts(null),
    );
  }, []);
  if (!shifts || shifts.length === 0) return null;
  const now = Date.now();
  const current = shifts.find((s) => Date.parse(s.start) <= now && Date.parse(s.end) > now);
  const next = shifts.find((s) => Date.parse(s.start) > now);
  const until = (s: MyShift) => (s.end === to ? `at least ${formatDateTime(s.end)}` : formatDateTime(s.end));
  return (
    <section class="card panel oncall" aria-labelledby="oncall-title" data-testid="oncall">
      <h2 id="oncall-title">On call</h2>
      {current ? (
        <p data-testid="on-call-now">
          <strong>You are on call</strong> for {current.schedule.name} until {until(current)}.
        </p>
      ) : null}
      {next ? (
        <p data-testid="next-shift">
          Next shift: {next.schedule.name}, {formatDateTime(next.start)} until {until(next)}.
        </p>
      ) : null}
    </section>
  );
}
