// iCalendar texts shaped like real feeds (Google's and Outlook's exports) for the calendar tests.

/** An Outlook-style zone definition: a Windows name, so only the VTIMEZONE can say what it means. */
export const BERLIN_VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:W. Europe Standard Time',
  'BEGIN:STANDARD',
  'DTSTART:16010101T030000',
  'TZOFFSETFROM:+0200',
  'TZOFFSETTO:+0100',
  'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10',
  'END:STANDARD',
  'BEGIN:DAYLIGHT',
  'DTSTART:16010101T020000',
  'TZOFFSETFROM:+0100',
  'TZOFFSETTO:+0200',
  'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3',
  'END:DAYLIGHT',
  'END:VTIMEZONE',
];

export function vcalendar(...blocks: string[][]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Muster tests//EN', ...blocks.flat(), 'END:VCALENDAR', ''].join('\r\n');
}

export function vevent(fields: Record<string, string>): string[] {
  return ['BEGIN:VEVENT', 'DTSTAMP:20260101T000000Z', ...Object.entries(fields).map(([k, v]) => `${k}:${v}`), 'END:VEVENT'];
}

/**
 * A host's week in Europe/Berlin around the 2026 DST change (29 March): a weekly Monday 10:00-11:00
 * with an EXDATE (23 March), one occurrence moved (6 April -> Tuesday 7 April 14:00) and one
 * cancelled (13 April); a TRANSPARENT event; an all-day event; and an event Muster wrote itself.
 */
export function hostWeekIcs(tzid: 'W. Europe Standard Time' | 'Europe/Berlin'): string {
  const z = `;TZID=${tzid}`;
  return vcalendar(
    tzid === 'W. Europe Standard Time' ? BERLIN_VTIMEZONE : [],
    vevent({ UID: 'weekly@example.com', SUMMARY: 'Standup', [`DTSTART${z}`]: '20260316T100000', [`DTEND${z}`]: '20260316T110000', RRULE: 'FREQ=WEEKLY;BYDAY=MO;COUNT=6', [`EXDATE${z}`]: '20260323T100000' }),
    vevent({ UID: 'weekly@example.com', [`RECURRENCE-ID${z}`]: '20260406T100000', SUMMARY: 'Standup (moved)', [`DTSTART${z}`]: '20260407T140000', [`DTEND${z}`]: '20260407T150000' }),
    vevent({ UID: 'weekly@example.com', [`RECURRENCE-ID${z}`]: '20260413T100000', SUMMARY: 'Standup', STATUS: 'CANCELLED', [`DTSTART${z}`]: '20260413T100000', [`DTEND${z}`]: '20260413T110000' }),
    vevent({ UID: 'free@example.com', SUMMARY: 'Reminder', TRANSP: 'TRANSPARENT', DTSTART: '20260317T120000Z', DTEND: '20260317T130000Z' }),
    vevent({ UID: 'allday@example.com', SUMMARY: 'Holiday', 'DTSTART;VALUE=DATE': '20260320', 'DTEND;VALUE=DATE': '20260321' }),
    vevent({ UID: 'bk_abc123@muster', SUMMARY: 'Visit with Host', DTSTART: '20260318T090000Z', DTEND: '20260318T100000Z' }),
  );
}

/**
 * A zone whose STANDARD and DAYLIGHT parts repeat `RRULE:FREQ=<freq>` from `start` (issue #31's
 * probe: SECONDLY from 1601, MINUTELY from year 0001), and an event in March 2026 that uses it.
 * ical.js alone expands such a zone without end: the server ran out of memory.
 */
export function hostileZoneIcs(start: string, freq: 'SECONDLY' | 'MINUTELY'): string {
  const part = (name: 'STANDARD' | 'DAYLIGHT', from: string, to: string) => [`BEGIN:${name}`, `DTSTART:${start}`, `TZOFFSETFROM:${from}`, `TZOFFSETTO:${to}`, `RRULE:FREQ=${freq}`, `END:${name}`];
  return vcalendar(
    ['BEGIN:VTIMEZONE', 'TZID:Probe Standard Time', ...part('STANDARD', '+0200', '+0100'), ...part('DAYLIGHT', '+0100', '+0200'), 'END:VTIMEZONE'],
    vevent({ UID: 'probe@example.com', 'DTSTART;TZID=Probe Standard Time': '20260316T100000', 'DTEND;TZID=Probe Standard Time': '20260316T110000' }),
  );
}

/** One event with `count` RDATE lines, seven hours apart from 1 March 2026 (the probe's 50,000 stalled the event loop 3-4 s). */
export function manyRdatesIcs(count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`RDATE:${new Date(Date.UTC(2026, 2, 1) + i * 7 * 3_600_000).toISOString().replace(/[-:]|\.\d{3}/g, '')}`);
  return vcalendar(vevent({ UID: 'rdates@example.com', DTSTART: '20260301T000000Z', DTEND: '20260301T003000Z' }).slice(0, -1).concat(lines, ['END:VEVENT']));
}

/** `count` plain one-hour events, three hours apart from 2015 (a long-lived calendar's history, about 200 bytes each). */
export function longHistoryIcs(count: number): string {
  const events: string[][] = [];
  for (let i = 0; i < count; i++) {
    const s = new Date(Date.UTC(2015, 0, 1) + i * 3 * 3_600_000);
    const stamp = (d: Date) => d.toISOString().replace(/[-:]|\.\d{3}/g, '');
    events.push(vevent({ UID: `history-${i}@example.com`, SUMMARY: 'Meeting with someone about something', DTSTART: stamp(s), DTEND: stamp(new Date(s.getTime() + 3_600_000)) }));
  }
  return vcalendar(...events);
}
