// A schedule's next two weeks as PagerDuty and OnCall draw them: one row per layer, the overrides,
// and the final row (who is actually on call, gaps highlighted). Times in the viewer's zone. A
// click on the final row picks that hour for a new override (the form beside it takes typed times too).
import type { ScheduleTimeline, Shift } from '../../types';

const DAY = 86_400_000;
// Light fills with the page's dark text: readable at any size (WCAG AA contrast).
const PALETTE = ['#dbeafe', '#dcfce7', '#fef3c7', '#fce7f3', '#e0e7ff', '#ccfbf1', '#ffedd5', '#ede9fe'];
export const colorOf = (userId: number) => PALETTE[userId % PALETTE.length]!;

const when = (ms: number) => new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' }).format(ms);
const dayLabel = (ms: number) => new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric' }).format(ms);

interface Piece {
  start: number;
  end: number;
  label: string;
  title: string;
  color?: string;
  gap?: boolean;
}

function Row({ name, pieces, from, to, testid, onPick }: { name: string; pieces: Piece[]; from: number; to: number; testid: string; onPick?: (at: number) => void }) {
  const pct = (t: number) => ((Math.min(Math.max(t, from), to) - from) / (to - from)) * 100;
  const pick = onPick
    ? (e: MouseEvent) => {
        const box = (e.currentTarget as HTMLElement).getBoundingClientRect();
        onPick(from + ((e.clientX - box.left) / box.width) * (to - from));
      }
    : undefined;
  return (
    <div class="tl-row" data-testid={testid}>
      <div class="tl-name">{name}</div>
      <div class={`tl-track${onPick ? ' pickable' : ''}`} onClick={pick} title={onPick ? 'Click to start an override at this time' : undefined}>
        {pieces.map((p) => (
          <div
            key={`${p.start}-${p.label}`}
            class={`tl-seg${p.gap ? ' gap' : ''}`}
            style={{ left: `${pct(p.start)}%`, width: `${pct(p.end) - pct(p.start)}%`, ...(p.color ? { background: p.color } : {}) }}
            title={p.title}
            data-user={p.label}
          >
            <span>{p.label}</span>
          </div>
        ))}
      </div>
    </div>
  );
}

const shiftPiece = (s: Shift): Piece => ({
  start: Date.parse(s.start),
  end: Date.parse(s.end),
  label: s.user_name,
  title: `${s.user_name}: ${when(Date.parse(s.start))} to ${when(Date.parse(s.end))}`,
  color: colorOf(s.user_id),
});

export function Timeline({ data, onPick }: { data: ScheduleTimeline; onPick?: (at: number) => void }) {
  const from = Date.parse(data.from);
  const to = Date.parse(data.to);
  const days: number[] = [];
  for (let d = new Date(from); d.getTime() < to; d.setDate(d.getDate() + 1)) days.push(d.getTime());
  const final = [
    ...data.final.map(shiftPiece),
    ...data.gaps.map((g): Piece => ({ start: Date.parse(g.start), end: Date.parse(g.end), label: 'Nobody', title: `Gap: nobody on call ${when(Date.parse(g.start))} to ${when(Date.parse(g.end))}`, gap: true })),
  ];
  return (
    // Scrolls sideways on a phone: focusable, so the keyboard can scroll it too.
    <div class="timeline" data-testid="timeline" tabIndex={0} role="region" aria-label="Timeline of the next two weeks">
      <div class="tl-row tl-days" aria-hidden="true">
        <div class="tl-name" />
        <div class="tl-track">
          {days.map((d) => (
            <div key={d} class="tl-day" style={{ left: `${((d - from) / (to - from)) * 100}%`, width: `${(DAY / (to - from)) * 100}%` }}>
              {dayLabel(d)}
            </div>
          ))}
        </div>
      </div>
      {data.layers.map((l) => (
        <Row key={l.id} name={l.name} pieces={l.shifts.map(shiftPiece)} from={from} to={to} testid="tl-layer" />
      ))}
      <Row
        name="Overrides"
        pieces={data.overrides.map((o) => shiftPiece({ user_id: o.user_id, user_name: o.user_name, start: o.start, end: o.end, source: { type: 'override', override_id: o.id } }))}
        from={from}
        to={to}
        testid="tl-overrides"
      />
      <Row name="On call" pieces={final} from={from} to={to} testid="tl-final" {...(onPick ? { onPick } : {})} />
      <ul class="visually-hidden" aria-label="Who is on call, in order">
        {final.sort((a, b) => a.start - b.start).map((p) => (
          <li key={p.start}>{p.title}</li>
        ))}
      </ul>
    </div>
  );
}
