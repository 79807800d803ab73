// Shapes of the public booking API as the booking and management pages read them.

export interface PublicEventType {
  event_type_id: number;
  name: string;
  slug: string;
  description: string | null;
  duration_minutes: number;
  location_type: 'video' | 'phone' | 'in_person' | 'other';
  /** The address or video link, when the host gave one (issue 20). */
  location?: string | null;
  requires_confirmation: boolean;
  min_notice_hours: number;
  max_advance_days: number;
  host_name: string;
  team_name: string | null;
  org_name: string | null;
  booking_path: string;
  bookable_from: string;
  bookable_until: string;
}

export interface Slot {
  start_time: string;
  end_time: string;
}

export interface SlotsAnswer {
  date: string;
  timezone: string;
  slots: Slot[];
}

export interface Booking {
  id: string;
  status: 'confirmed' | 'pending' | 'cancelled' | 'declined';
  event_type_id: number | null;
  attendee_name: string;
  attendee_email: string;
  start_time: string;
  end_time: string;
  notes: string | null;
  timezone: string;
  requires_confirmation: boolean;
  cancel_url: string;
  reschedule_url: string;
  created_at: string;
}

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
