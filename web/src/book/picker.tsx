// The day-and-time picker of the booking and management pages: a month calendar bounded by the
// event type's notice and advance, the open slots of the chosen day in the visitor's time zone,
// and a time zone select. Slots are fetched one day at a time (the chosen day), cached per zone.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatTime, ymd } from '../lib/format';
import type { Slot } from './types';
import { failureText, locale, t } from '../lib/i18n';

/** Calendar dates as YYYY-MM-DD strings, computed in UTC so no zone shifts them. */
const parse = (d: string) => new Date(`${d}T00:00:00Z`);
const fmt = (d: Date) => d.toISOString().slice(0, 10);
export const addDays = (d: string, n: number) => fmt(new Date(parse(d).getTime() + n * 86_400_000));
const monthOf = (d: string) => d.slice(0, 7);
const addMonths = (month: string, n: number) => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const t = new Date(Date.UTC(y, m - 1 + n, 1));
  return fmt(t).slice(0, 7);
};

export function longDate(d: string): string {
  return new Intl.DateTimeFormat(locale(), { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' }).format(parse(d));
}

/** Every IANA zone the browser knows, the visitor's first; a short list when the API is missing. */
export function zoneList(current: string): string[] {
  let all: string[] = [];
  try {
    all = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  } catch {
    all = [];
  }
  if (all.length === 0) all = ['UTC', 'Europe/London', 'Europe/Berlin', 'America/New_York', 'America/Chicago', 'America/Los_Angeles', 'Asia/Tokyo', 'Asia/Kolkata', 'Australia/Sydney'];
  return [current, ...all.filter((z) => z !== current)];
}

export function zoneLabel(zone: string): string {
  try {
    const part = new Intl.DateTimeFormat(locale(), { timeZone: zone, timeZoneName: 'shortOffset' }).formatToParts(new Date()).find((p) => p.type === 'timeZoneName');
    return `${zone.replace(/_/g, ' ')}${part ? ` (${part.value})` : ''}`;
  } catch {
    return zone;
  }
}

/** "New York (GMT-5)": the short form for the closed select. */
export function shortZoneLabel(zone: string): string {
  try {
    const part = new Intl.DateTimeFormat(locale(), { timeZone: zone, timeZoneName: 'shortOffset' }).formatToParts(new Date()).find((p) => p.type === 'timeZoneName');
    const city = (zone.split('/').pop() ?? zone).replace(/_/g, ' ');
    return `${city}${part ? ` (${part.value})` : ''}`;
  } catch {
    return zone;
  }
}

export function ZoneSelect({ zone, onChange }: { zone: string; onChange: (z: string) => void }) {
  const zones = useMemo(() => zoneList(zone), [zone]);
  return (
    <div class="zone">
      <label for="zone">{t('picker.zone')}</label>
      <select id="zone" data-testid="zone" value={zone} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {zones.map((z) => (
          <option key={z} value={z}>
            {z === zone ? shortZoneLabel(z) : z.replace(/_/g, ' ')}
          </option>
        ))}
      </select>
    </div>
  );
}

type DayState = Slot[] | 'loading' | { error: string };

interface PickerProps {
  zone: string;
  onZone: (z: string) => void;
  /** First and last instants a slot may start (the event's notice and advance). */
  from: string;
  until: string;
  load: (date: string, zone: string) => Promise<Slot[]>;
  onPick: (slot: Slot, date: string) => void;
  /** The day to show first (e.g. the day of the slot the visitor came back from); else the first day with times. */
  initialDate?: string | undefined;
  /** How many days ahead to look for the first day with times (sequentially, once). */
  scanDays?: number;
}

export function Picker({ zone, onZone, from, until, load, onPick, initialDate, scanDays = 14 }: PickerProps) {
  const minDate = ymd(new Date(from), zone);
  const maxDate = ymd(new Date(until), zone);
  const [selected, setSelected] = useState<string>(initialDate ?? minDate);
  const selectedRef = useRef(selected);
  selectedRef.current = selected;
  const [month, setMonth] = useState<string>(monthOf(initialDate ?? minDate));
  const [days, setDays] = useState<Record<string, DayState>>({});
  const cache = useRef(new Map<string, DayState>());
  const generation = useRef(0);
  /** The generation whose scan for a first open day still runs; a click by the visitor stops it. */
  const scanning = useRef(0);

  const put = (key: string, date: string, s: DayState) => {
    cache.current.set(key, s);
    setDays((d) => ({ ...d, [date]: s }));
  };

  async function fetchDay(date: string, gen: number): Promise<Slot[] | undefined> {
    const key = `${zone}|${date}`;
    const hit = cache.current.get(key);
    if (Array.isArray(hit)) return hit;
    put(key, date, 'loading');
    try {
      const slots = await load(date, zone);
      if (gen !== generation.current) return undefined;
      put(key, date, slots);
      return slots;
    } catch (err) {
      if (gen === generation.current) put(key, date, { error: failureText(err) });
      return undefined;
    }
  }

  // First render: the given day, or the first day with open times (looked up one day at a time).
  // A zone change: the same calendar day again, in the new zone.
  const first = useRef(true);
  useEffect(() => {
    const gen = ++generation.current;
    scanning.current = gen;
    cache.current.clear();
    setDays({});
    const inRange = (d: string | undefined): d is string => d !== undefined && d >= minDate && d <= maxDate;
    const scan = first.current && !inRange(initialDate);
    const start = first.current ? (inRange(initialDate) ? initialDate : minDate) : inRange(selected) ? selected : minDate;
    first.current = false;
    void (async () => {
      for (let i = 0, d = start; i < scanDays && d <= maxDate; i++, d = addDays(d, 1)) {
        if (gen !== generation.current || scanning.current !== gen) return;
        setSelected(d);
        setMonth(monthOf(d));
        const slots = await fetchDay(d, gen);
        if (!scan || slots === undefined || slots.length > 0) return;
      }
    })();
  }, [zone, minDate, maxDate]);

  function choose(date: string) {
    scanning.current = -1;
    setSelected(date);
    setFocused(date);
    void fetchDay(date, generation.current);
  }

  // Issue 20: a day with no open times is not offered. Once the first day is shown, the other
  // bookable days of the visible month are looked up (three at a time, cached per zone) and the
  // empty ones are marked unavailable.
  useEffect(() => {
    const gen = generation.current;
    const todo = monthGrid(month).filter((d): d is string => d !== null && d >= minDate && d <= maxDate);
    let stopped = false;
    void (async () => {
      // Let the first day (or the scan for a first open day) go first.
      const settled = () => {
        const hit = cache.current.get(`${zone}|${selectedRef.current}`);
        return hit !== undefined && hit !== 'loading';
      };
      while (!stopped && gen === generation.current && scanning.current === gen && !settled()) await new Promise((r) => setTimeout(r, 50));
      const queue = todo.filter((d) => !cache.current.has(`${zone}|${d}`));
      const worker = async () => {
        for (let d = queue.shift(); d !== undefined && !stopped && gen === generation.current; d = queue.shift()) await fetchDay(d, gen);
      };
      await Promise.all([worker(), worker(), worker()]);
    })();
    return () => {
      stopped = true;
    };
  }, [month, zone, minDate, maxDate]);

  // One tab stop for the grid (roving tabindex); arrows move by day and week, Home/End to the
  // week's ends, Page Up/Down by month; Enter or Space picks the focused day.
  const [focused, setFocused] = useState<string>(selected);
  const gridRef = useRef<HTMLDivElement>(null);
  const wantFocus = useRef(false);
  const tabStop = focused >= minDate && focused <= maxDate && monthOf(focused) === month ? focused : monthOf(selected) === month ? selected : (monthGrid(month).find((d) => d !== null && d >= minDate && d <= maxDate) ?? selected);
  useEffect(() => {
    if (!wantFocus.current) return;
    wantFocus.current = false;
    gridRef.current?.querySelector<HTMLElement>(`[data-date="${focused}"]`)?.focus();
  }, [focused, month]);
  function onGridKey(e: KeyboardEvent) {
    const from = tabStop;
    const weekday = (parse(from).getUTCDay() + 6) % 7;
    const step: Record<string, number | undefined> = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7, Home: -weekday, End: 6 - weekday };
    let to: string | undefined;
    if (step[e.key] !== undefined) to = addDays(from, step[e.key]!);
    else if (e.key === 'PageUp' || e.key === 'PageDown') {
      const m = addMonths(monthOf(from), e.key === 'PageUp' ? -1 : 1);
      const day = Math.min(Number(from.slice(8)), new Date(Date.UTC(Number(m.slice(0, 4)), Number(m.slice(5, 7)), 0)).getUTCDate());
      to = `${m}-${String(day).padStart(2, '0')}`;
    }
    if (to === undefined) return;
    e.preventDefault();
    if (to < minDate) to = minDate;
    if (to > maxDate) to = maxDate;
    wantFocus.current = true;
    setFocused(to);
    setMonth(monthOf(to));
  }

  /** The next day after `d` not known to be empty, within the bookable range. */
  const nextOpen = (d: string): string | undefined => {
    for (let x = addDays(d, 1); x <= maxDate; x = addDays(x, 1)) {
      const s = days[x];
      if (!(Array.isArray(s) && s.length === 0)) return x;
    }
    return undefined;
  };
  const state = days[selected];
  const grid = monthGrid(month);
  const today = ymd(new Date(), zone);
  const monthName = new Intl.DateTimeFormat(locale(), { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(parse(`${month}-01`));
  const weekdays = [...Array(7).keys()].map((i) => new Intl.DateTimeFormat(locale(), { weekday: 'short', timeZone: 'UTC' }).format(parse(addDays('2024-01-01', i))));

  return (
    <div class="picker">
      <section class="calendar" aria-label={t('picker.choose')}>
        <div class="cal-head">
          <button type="button" class="ghost icon" aria-label={t('picker.prevMonth')} disabled={month <= monthOf(minDate)} onClick={() => setMonth(addMonths(month, -1))}>
            ‹
          </button>
          <h2 data-testid="month">{monthName}</h2>
          <button type="button" class="ghost icon" aria-label={t('picker.nextMonth')} disabled={month >= monthOf(maxDate)} onClick={() => setMonth(addMonths(month, 1))}>
            ›
          </button>
        </div>
        <div class="cal-grid" role="group" aria-label={t('picker.keys', { month: monthName })} ref={gridRef} onKeyDown={onGridKey}>
          {weekdays.map((w) => (
            <span key={w} class="cal-wd" aria-hidden="true">
              {w}
            </span>
          ))}
          {grid.map((d, i) => {
            if (!d) return <span key={`pad${i}`} />;
            const out = d < minDate || d > maxDate;
            const s = days[d];
            const empty = Array.isArray(s) && s.length === 0;
            const cls = ['cal-day', d === selected ? 'selected' : '', empty ? 'empty' : '', d === today ? 'today' : ''].filter(Boolean).join(' ');
            // Unavailable days stay in the grid (aria-disabled, still reachable by the arrows) but cannot be chosen.
            const unavailable = out || empty;
            return (
              <button
                key={d}
                type="button"
                class={cls}
                data-testid="day"
                data-date={d}
                data-available={unavailable ? 'false' : Array.isArray(s) ? 'true' : 'unknown'}
                tabIndex={d === tabStop ? 0 : -1}
                aria-disabled={unavailable ? 'true' : undefined}
                aria-pressed={d === selected}
                aria-label={empty ? t('picker.dayNoTimes', { day: longDate(d) }) : out ? t('picker.dayOut', { day: longDate(d) }) : longDate(d)}
                onFocus={() => setFocused(d)}
                onClick={() => {
                  if (!unavailable) choose(d);
                }}
              >
                {Number(d.slice(8))}
              </button>
            );
          })}
        </div>
      </section>
      <section class="times" aria-live="polite">
        <ZoneSelect zone={zone} onChange={onZone} />
        <h3 class="times-day" data-testid="selected-day">
          {longDate(selected)}
        </h3>
        {state === undefined || state === 'loading' ? (
          <ul class="slot-list" aria-busy="true" data-testid="slots-loading">
            {[0, 1, 2, 3].map((i) => (
              <li key={i} class="skeleton" />
            ))}
          </ul>
        ) : !Array.isArray(state) ? (
          <div class="alert error" role="alert">
            <p>{state.error}</p>
            <button type="button" class="secondary" onClick={() => { cache.current.delete(`${zone}|${selected}`); choose(selected); }}>
              {t('common.tryAgain')}
            </button>
          </div>
        ) : state.length === 0 ? (
          <div class="empty-day" data-testid="no-slots">
            <p>{t('picker.noTimes')}</p>
            {nextOpen(selected) ? (
              <button type="button" class="secondary" data-testid="next-open" onClick={() => choose(nextOpen(selected)!)}>
                {t('picker.nextOpen')}
              </button>
            ) : null}
          </div>
        ) : (
          <ul class="slot-list">
            {state.map((s) => (
              <li key={s.start_time}>
                <button type="button" class="slot" data-testid="slot" data-start={s.start_time} onClick={() => onPick(s, selected)}>
                  {formatTime(s.start_time, zone)}
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

/** The days of a month in weeks starting Monday, padded with nulls. */
function monthGrid(month: string): (string | null)[] {
  const first = `${month}-01`;
  const lead = (parse(first).getUTCDay() + 6) % 7;
  const out: (string | null)[] = Array<null>(lead).fill(null);
  for (let d = first; monthOf(d) === month; d = addDays(d, 1)) out.push(d);
  while (out.length % 7) out.push(null);
  return out;
}
