import type { LocationType } from '../../db/schema.js';

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

/**
 * A booking's time as its reader should see it: in their own zone, with the zone named, e.g.
 * `Tue, 6 Jan 2026, 10:00–10:30 (Europe/Berlin)`. The end's day is shown when it differs.
 */
export function whenIn(start: string, end: string, zone: string | null | undefined): string {
  const timeZone = usableZone(zone);
  const day = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone });
  const time = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone });
  const [s, e] = [new Date(start), new Date(end)];
  const endText = day.format(e) === day.format(s) ? time.format(e) : `${day.format(e)}, ${time.format(e)}`;
  return `${day.format(s)}, ${time.format(s)}–${endText} (${timeZone})`;
}

export const LOCATION_LABEL: Record<LocationType, string | null> = {
  video: 'Video call',
  phone: 'Phone call',
  in_person: 'In person',
  other: null,
};
