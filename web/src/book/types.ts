// Shapes of the public booking API as the booking and management pages read them.
// The API's own types, generated from its OpenAPI description (clients/typescript, `npm run
// client:generate`): a changed response breaks the build, not a page. Aliases under the names the
// pages import.
import type * as api from '../../../clients/typescript/schema.js';
import { t } from '../lib/i18n';

export type PublicEventType = api.PublicEventType;
export type Slot = api.Slot;
export type SlotsAnswer = api.Availability;
export type Booking = api.Booking;

/** "30 min", "1 h 30 min" in the page's language. */
export function durationLabel(minutes: number): string {
  if (minutes < 60) return t('duration.min', { m: String(minutes) });
  const h = String(Math.floor(minutes / 60));
  const m = minutes % 60;
  return m ? t('duration.hmin', { h, m: String(m) }) : t('duration.h', { h });
}
