
/** A zone Intl knows, else UTC (a stored zone the runtime's ICU has since dropped must not fail a notice). */
function usableZone(zone: string | null | undefined): string {
  if (!zone) return 'UTC';
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}

/** A locale Intl accepts, else undefined (a stored tag is canonical already; this only keeps a notice from failing). */
function usableLocale(language: string | null | undefined): string | undefined {
  if (!language) return undefined;
  try {
    return Intl.getCanonicalLocales(language)[0];
  } catch {
    return undefined;
  }
}

/**
 * A booking's time as its reader should see it: in their own zone, with the zone named, e.g.
 * `Tue, 6 Jan 2026, 10:00–10:30 (Europe/Berlin)`. The end's day is shown when it differs. With a
 * `language` (the attendee's, BCP 47) the date and time follow that language through Intl
 * (`de`: `Di., 6. Jan. 2026, 10:00–10:30 (Europe/Berlin)`); without one, British English on a 24-hour clock.
 */
export function whenIn(start: string, end: string, zone: string | null | undefined, language?: string | null): string {
  const timeZone = usableZone(zone);
  const locale = usableLocale(language);
  const day = new Intl.DateTimeFormat(locale ?? 'en-GB', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone });
  const time = new Intl.DateTimeFormat(
    locale ?? 'en-GB',
    locale ? { hour: 'numeric', minute: '2-digit', timeZone } : { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone },
  );
  const [s, e] = [new Date(start), new Date(end)];
  const endText = day.format(e) === day.format(s) ? time.format(e) : `${day.format(e)}, ${time.format(e)}`;
  return `${day.format(s)}, ${time.format(s)}–${endText} (${timeZone})`;
}
