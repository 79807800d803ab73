// Shapes of the public booking API as the booking and management pages read them.
// The API's own types, generated from its OpenAPI description (clients/typescript, `npm run
// client:generate`): a changed response breaks the build, not a page. Aliases under the names the
// pages import.
import type * as api from '../../../clients/typescript/schema.js';

export type PublicEventType = api.PublicEventType;
export type Slot = api.Slot;
export type SlotsAnswer = api.Availability;
export type Booking = api.Booking;

export const LOCATION_LABEL: Record<PublicEventType['location_type'], string> = {
  video: 'Video call',
  phone: 'Phone call',
  in_person: 'In person',
  other: 'Details follow by email',
};

export function durationLabel(minutes: number): string {
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m ? `${h} h ${m} min` : `${h} h`;
}
