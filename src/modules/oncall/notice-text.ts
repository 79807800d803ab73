// A handoff notice in its reader's own time zone: "You are on call for Water network from 09:00
// today (Europe/London) until 09:00 Monday".
import { DateTime } from 'luxon';
import { isTimeZone } from '../../lib/timezone.js';
import { DAY, localDay } from './zone.js';

/** `HH:MM` and the day in words: today, tomorrow, a weekday within the week, else the date. */
function when(t: number, now: number, zone: string): string {
  const d = DateTime.fromMillis(t, { zone, locale: 'en-GB' });
  const days = Math.round((localDay(zone, t) - localDay(zone, now)) / DAY);
  const day =
    days === 0 ? 'today'
    : days === 1 ? 'tomorrow'
    : days === -1 ? 'yesterday'
    : days > 1 && days < 7 ? d.toFormat('cccc')
    : d.year === DateTime.fromMillis(now, { zone }).year ? d.toFormat('cccc d LLLL')
    : d.toFormat('cccc d LLLL yyyy');
  return `${d.toFormat('HH:mm')} ${day}`;
}

export function noticeText(n: { schedule: string; zone: string; start: number; end: number; now: number }): string {
  const zone = isTimeZone(n.zone) ? n.zone : 'UTC';
  return `You are on call for ${n.schedule} from ${when(n.start, n.now, zone)} (${zone}) until ${when(n.end, n.now, zone)}`;
}
