// Bookings where you are the host: upcoming or past, by status; cancel, or reschedule to a free slot.
import { useState } from 'preact/hooks';
import { del, get, post, qs } from '../../lib/api';
import { browserZone, formatDate, formatTime, ymd } from '../../lib/format';
import { setQuery, type Loc } from '../router';
import type { Booking, EventType } from '../types';
import { Empty, ErrorAlert, Loading, PageHeader, Pager, useAsync } from '../ui';

const STATUS_CLASS: Record<string, string> = { confirmed: 'ok', pending: 'warn', cancelled: '', declined: 'danger' };

export function BookingsView({ loc }: { loc: Loc }) {
  const when = loc.query.get('when') === 'past' ? 'past' : 'upcoming';
  const status = loc.query.get('status') ?? '';
  const page = Math.max(1, Number(loc.query.get('page')) || 1);
  const [now] = useState(() => new Date().toISOString());
  const list = useAsync(
    () =>
      get<{ bookings: Booking[]; has_more: boolean }>(
        `/v1/bookings${qs({ status, page, limit: 25, from: when === 'upcoming' ? now : undefined, to: when === 'past' ? now : undefined })}`,
      ),
    [when, status, page],
  );
  const types = useAsync(() => get<{ event_types: EventType[] }>('/v1/event-types').then((r) => new Map(r.event_types.map((t) => [t.id, t]))), []);
  const bookings = [...(list.data?.bookings ?? [])].sort((a, b) => (when === 'upcoming' ? a.start_time.localeCompare(b.start_time) : b.start_time.localeCompare(a.start_time)));
  const replace = (b: Booking) => list.setData((d) => (d ? { ...d, bookings: d.bookings.map((x) => (x.id === b.id ? b : x)) } : d));

  return (
    <section class="view">
      <PageHeader title="Bookings" sub="Meetings people booked with you, in your time zone." />
      <div class="filters card">
        <div class="segmented" role="group" aria-label="When">
          <button type="button" class={when === 'upcoming' ? 'active' : ''} aria-pressed={when === 'upcoming'} onClick={() => setQuery({ when: undefined, page: undefined })}>
            Upcoming
          </button>
          <button type="button" class={when === 'past' ? 'active' : ''} aria-pressed={when === 'past'} onClick={() => setQuery({ when: 'past', page: undefined })}>
            Past
          </button>
        </div>
        <div class="field">
          <label for="b-status">Status</label>
          <select id="b-status" value={status} onChange={(e) => setQuery({ status: e.currentTarget.value, page: undefined })}>
            <option value="">Any status</option>
            <option value="confirmed">Confirmed</option>
            <option value="pending">Pending</option>
            <option value="cancelled">Cancelled</option>
            <option value="declined">Declined</option>
          </select>
        </div>
      </div>
      <ErrorAlert error={list.error} title="Bookings could not load." />
      {list.loading && !list.data ? <Loading label="Loading bookings" /> : null}
      {list.data && bookings.length === 0 ? (
        <Empty title={when === 'upcoming' ? 'No upcoming bookings' : 'No past bookings'}>
          Share an event type's booking link from <a href="/app/event-types">Event types</a> to get booked.
        </Empty>
      ) : null}
      <ul class="booking-list" data-testid="booking-list">
        {bookings.map((b) => (
          <BookingCard key={b.id} booking={b} type={b.event_type_id ? types.data?.get(b.event_type_id) : undefined} onChange={replace} />
        ))}
      </ul>
      <Pager page={page} hasMore={list.data?.has_more} onPage={(p) => setQuery({ page: p > 1 ? p : undefined })} />
    </section>
  );
}

function BookingCard({ booking: b, type, onChange }: { booking: Booking; type: EventType | undefined; onChange: (b: Booking) => void }) {
  const [mode, setMode] = useState<'idle' | 'reschedule'>('idle');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const active = b.status === 'confirmed' || b.status === 'pending';
  const upcoming = new Date(b.end_time).getTime() > Date.now();

  const cancel = async () => {
    if (!confirm(`Cancel the booking with ${b.attendee_name}? They will be emailed.`)) return;
    setBusy(true);
    setError(null);
    try {
      await del(`/v1/bookings/${encodeURIComponent(b.id)}`);
      onChange({ ...b, status: 'cancelled' });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <li class="card booking" data-testid="booking-row" data-booking-id={b.id}>
      <div class="booking-when">
        <strong>{formatDate(b.start_time)}</strong>
        <span>
          {formatTime(b.start_time)} – {formatTime(b.end_time)}
        </span>
      </div>
      <div class="booking-main">
        <div class="row">
          <strong>{b.attendee_name}</strong>
          <span class={`badge ${STATUS_CLASS[b.status] ?? ''}`}>{b.status}</span>
        </div>
        <small class="muted">
          {b.attendee_email} · {type ? type.name : 'Deleted event type'} · their zone {b.timezone}
        </small>
        {b.notes ? <p class="prewrap notes">{b.notes}</p> : null}
        <ErrorAlert error={error} />
        {active && upcoming ? (
          <div class="row">
            <button type="button" class="secondary small" onClick={() => setMode(mode === 'reschedule' ? 'idle' : 'reschedule')} disabled={!b.event_type_id}>
              {mode === 'reschedule' ? 'Close' : 'Reschedule'}
            </button>
            <button type="button" class="secondary small danger-text" onClick={() => void cancel()} disabled={busy}>
              Cancel booking
            </button>
          </div>
        ) : null}
        {mode === 'reschedule' && b.event_type_id ? (
          <Reschedule
            booking={b}
            eventTypeId={b.event_type_id}
            onDone={(nb) => {
              onChange(nb);
              setMode('idle');
            }}
          />
        ) : null}
      </div>
    </li>
  );
}

function Reschedule({ booking, eventTypeId, onDone }: { booking: Booking; eventTypeId: number; onDone: (b: Booking) => void }) {
  const zone = browserZone();
  const [date, setDate] = useState(() => ymd(new Date(booking.start_time), zone));
  const slots = useAsync(() => get<{ slots: { start_time: string }[] }>(`/v1/availability${qs({ event_type_id: eventTypeId, date, timezone: zone })}`).then((r) => r.slots), [date]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const move = async (start: string) => {
    setBusy(true);
    setError(null);
    try {
      onDone(await post<Booking>(`/v1/bookings/${encodeURIComponent(booking.id)}/reschedule`, { start_time: start }));
    } catch (err) {
      setError(err);
      slots.reload();
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="reschedule stack">
      <div class="field">
        <label for={`rs-${booking.id}`}>New day</label>
        <input id={`rs-${booking.id}`} type="date" value={date} min={ymd(new Date(), zone)} onChange={(e) => e.currentTarget.value && setDate(e.currentTarget.value)} />
      </div>
      <ErrorAlert error={error} />
      <ErrorAlert error={slots.error} />
      {slots.loading ? <Loading label="Finding free times" /> : null}
      {slots.data && slots.data.length === 0 ? <p class="muted">No free times on this day. Try another.</p> : null}
      <div class="slots">
        {slots.data?.map((s) => (
          <button key={s.start_time} type="button" class="secondary small" disabled={busy} onClick={() => void move(s.start_time)}>
            {formatTime(s.start_time)}
          </button>
        ))}
      </div>
    </div>
  );
}
