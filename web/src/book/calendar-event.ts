// The calendar entry of a booking, for "Add to calendar" on the confirmation and management pages.
import type { CalendarEvent } from '../lib/add-to-calendar';
import { t } from '../lib/i18n';
import type { Booking, PublicEventType } from './types';

export function calendarEventOf(et: PublicEventType, b: Booking): CalendarEvent {
  const manage = b.cancel_url.split('?')[0]!;
  return {
    uid: `${b.id}@muster`,
    title: t('cal.summary', { event: et.name, host: et.host_name }),
    start: b.start_time,
    end: b.end_time,
    location: et.location ?? t(`loc.${et.location_type}`),
    description: t('cal.manage', { url: manage }),
    url: manage,
  };
}
