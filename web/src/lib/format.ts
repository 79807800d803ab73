// Dates and times shown in the visitor's own time zone through Intl (no date library in the bundle).

export const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** The locale of every date below: the browser's own unless a page sets one (the public pages' `?lang=`, see lib/i18n.ts). */
let dateLocale: string | undefined;
export function setDateLocale(locale: string | undefined): void {
  dateLocale = locale;
}

export function formatTime(iso: string, timeZone = browserZone()): string {
  return new Intl.DateTimeFormat(dateLocale, { hour: 'numeric', minute: '2-digit', timeZone }).format(new Date(iso));
}

export function formatDate(iso: string, timeZone = browserZone()): string {
  return new Intl.DateTimeFormat(dateLocale, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone }).format(new Date(iso));
}

export function formatDateTime(iso: string, timeZone = browserZone()): string {
  return new Intl.DateTimeFormat(dateLocale, { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(new Date(iso));
}

/** "3 min ago", "2 h ago", or the date. */
export function ago(iso: string, now = Date.now()): string {
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return formatDateTime(iso);
}

/** YYYY-MM-DD of a Date in a zone. */
export function ymd(date: Date, timeZone = browserZone()): string {
  return new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', timeZone }).format(date);
}
