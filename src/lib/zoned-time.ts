import { DateTime, IANAZone } from 'luxon';

/**
 * An instant as a person in `zone` reads it, in words (`Tue 3 Mar 2026, 14:05`), for emails: their
 * profile's zone, or UTC when it has none Luxon knows. `time` is the clock time alone.
 */
export function zonedWords(instant: string, zone: string | null | undefined): { time: string; full: string; zone: string } {
  const z = zone && IANAZone.isValidZone(zone) ? zone : 'UTC';
  const d = DateTime.fromISO(instant, { zone: 'utc' }).setZone(z).setLocale('en-GB');
  return { time: d.toFormat('HH:mm'), full: d.toFormat('ccc d LLL yyyy, HH:mm'), zone: z };
}
