// "Add to calendar" on the booking confirmation and the management page (issue 20): an .ics file
// made in the page (no request), and Google Calendar and Outlook.com links that open their "new
// event" form filled in. URL formats: Google's `calendar/render?action=TEMPLATE` and Outlook's
// `calendar/deeplink/compose?rru=addevent`, as documented by
// InteractionDesignFoundation/add-event-to-calendar-docs.
import { t } from './i18n';

export interface CalendarEvent {
  uid: string;
  title: string;
  start: string;
  end: string;
  location?: string | null;
  description?: string;
  url?: string;
}

/** 20260106T150000Z */
const basic = (iso: string) => new Date(iso).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
/** 2026-01-06T15:00:00Z */
const noMillis = (iso: string) => new Date(iso).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** RFC 5545 text: backslash, semicolon, comma and newline escaped; lines folded at 75 octets. */
function text(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\r?\n/g, '\\n');
}
function fold(line: string): string {
  const bytes = new TextEncoder().encode(line);
  if (bytes.length <= 75) return line;
  const out: string[] = [];
  let cur = '';
  let n = 0;
  for (const ch of line) {
    const len = new TextEncoder().encode(ch).length;
    if (n + len > (out.length ? 74 : 75)) {
      out.push(cur);
      cur = '';
      n = 0;
    }
    cur += ch;
    n += len;
  }
  out.push(cur);
  return out.join('\r\n ');
}

export function icsOf(e: CalendarEvent): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Muster//Booking//EN',
    'CALSCALE:GREGORIAN',
    'BEGIN:VEVENT',
    `UID:${e.uid}`,
    `DTSTAMP:${basic(new Date().toISOString())}`,
    `DTSTART:${basic(e.start)}`,
    `DTEND:${basic(e.end)}`,
    `SUMMARY:${text(e.title)}`,
    ...(e.location ? [`LOCATION:${text(e.location)}`] : []),
    ...(e.description ? [`DESCRIPTION:${text(e.description)}`] : []),
    ...(e.url ? [`URL:${e.url}`] : []),
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return `${lines.map(fold).join('\r\n')}\r\n`;
}

export function googleUrl(e: CalendarEvent): string {
  const p = new URLSearchParams({ action: 'TEMPLATE', text: e.title, dates: `${basic(e.start)}/${basic(e.end)}` });
  if (e.description) p.set('details', e.description);
  if (e.location) p.set('location', e.location);
  return `https://calendar.google.com/calendar/render?${p.toString()}`;
}

export function outlookUrl(e: CalendarEvent): string {
  const p = new URLSearchParams({ path: '/calendar/action/compose', rru: 'addevent', subject: e.title, startdt: noMillis(e.start), enddt: noMillis(e.end) });
  if (e.description) p.set('body', e.description);
  if (e.location) p.set('location', e.location);
  return `https://outlook.live.com/calendar/deeplink/compose?${p.toString()}`;
}

export function AddToCalendar({ event }: { event: CalendarEvent }) {
  const href = `data:text/calendar;charset=utf-8,${encodeURIComponent(icsOf(event))}`;
  return (
    <div class="add-to-calendar" data-testid="add-to-calendar">
      <h2 class="atc-title">{t('cal.title')}</h2>
      <div class="atc-links">
        <a class="button secondary" href={href} download="booking.ics" data-testid="atc-ics">
          {t('cal.ics')}
        </a>
        <a class="button secondary" href={googleUrl(event)} target="_blank" rel="noopener noreferrer" data-testid="atc-google">
          {t('cal.google')}
        </a>
        <a class="button secondary" href={outlookUrl(event)} target="_blank" rel="noopener noreferrer" data-testid="atc-outlook">
          {t('cal.outlook')}
        </a>
      </div>
    </div>
  );
}
