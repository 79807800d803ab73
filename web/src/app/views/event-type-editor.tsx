// Create or edit an event type (personal or a team's): basics, booking rules, weekly availability,
// blackout days, webhook; once saved, the Share panel (link, embed snippet, live preview).
import { useEffect, useState } from 'preact/hooks';
import { TimeZoneInput } from '../timezone-input';
import { ApiError, get, patch, post } from '../../lib/api';
import { browserZone } from '../../lib/format';
import { navigate } from '../router';
import type { Day, EventType, WeeklyWindow } from '../types';
import { CopyButton, Empty, ErrorAlert, errorsOf, FieldError, Loading, useAsync } from '../ui';
import { LOCATION_LABEL } from './event-types';
import { OwnerPicker, TeamInfo } from './event-type-owner';
import { SharePanel } from './share-panel';

const DAYS: { day: Day; label: string }[] = [
  { day: 'mon', label: 'Monday' },
  { day: 'tue', label: 'Tuesday' },
  { day: 'wed', label: 'Wednesday' },
  { day: 'thu', label: 'Thursday' },
  { day: 'fri', label: 'Friday' },
  { day: 'sat', label: 'Saturday' },
  { day: 'sun', label: 'Sunday' },
];

interface Form {
  name: string;
  slug: string;
  description: string;
  duration_minutes: string;
  location_type: string;
  location: string;
  requires_confirmation: boolean;
  min_notice_hours: string;
  max_advance_days: string;
  buffer_before_minutes: string;
  buffer_after_minutes: string;
  max_bookings_per_day: string;
  slot_interval_minutes: string;
  timezone: string;
  weekly: WeeklyWindow[];
  blackout_dates: string;
  webhook_url: string;
}

const defaults = (): Form => ({
  name: '',
  slug: '',
  description: '',
  duration_minutes: '30',
  location_type: 'video',
  location: '',
  requires_confirmation: false,
  min_notice_hours: '0',
  max_advance_days: '60',
  buffer_before_minutes: '0',
  buffer_after_minutes: '0',
  max_bookings_per_day: '',
  slot_interval_minutes: '',
  timezone: browserZone(),
  weekly: (['mon', 'tue', 'wed', 'thu', 'fri'] as Day[]).map((day) => ({ day, start: '09:00', end: '17:00' })),
  blackout_dates: '',
  webhook_url: '',
});

const fromType = (t: EventType): Form => ({
  name: t.name,
  slug: t.slug,
  description: t.description ?? '',
  duration_minutes: String(t.duration_minutes),
  location_type: t.location_type,
  location: t.location ?? '',
  requires_confirmation: t.requires_confirmation,
  min_notice_hours: String(t.min_notice_hours),
  max_advance_days: String(t.max_advance_days),
  buffer_before_minutes: String(t.buffer_before_minutes),
  buffer_after_minutes: String(t.buffer_after_minutes),
  max_bookings_per_day: t.max_bookings_per_day === null ? '' : String(t.max_bookings_per_day),
  slot_interval_minutes: t.slot_interval_minutes === null ? '' : String(t.slot_interval_minutes),
  timezone: t.availability.timezone,
  weekly: t.availability.weekly.map((w) => ({ ...w })),
  blackout_dates: t.blackout_dates.join('\n'),
  webhook_url: t.webhook_url ?? '',
});

/** The request body; numbers the person typed stay numbers, empty optional fields become null. */
function bodyOf(f: Form, creating: boolean): Record<string, unknown> {
  const num = (s: string) => (s.trim() === '' ? NaN : Number(s));
  const orNull = (s: string) => (s.trim() === '' ? null : Number(s));
  const body: Record<string, unknown> = {
    name: f.name,
    description: f.description.trim() ? f.description : null,
    duration_minutes: num(f.duration_minutes),
    location_type: f.location_type,
    location: f.location.trim() ? f.location.trim() : null,
    requires_confirmation: f.requires_confirmation,
    min_notice_hours: num(f.min_notice_hours),
    max_advance_days: num(f.max_advance_days),
    buffer_before_minutes: num(f.buffer_before_minutes),
    buffer_after_minutes: num(f.buffer_after_minutes),
    max_bookings_per_day: orNull(f.max_bookings_per_day),
    slot_interval_minutes: orNull(f.slot_interval_minutes),
    availability: { timezone: f.timezone.trim(), weekly: f.weekly },
    blackout_dates: f.blackout_dates.split(/[\s,]+/).filter(Boolean),
    webhook_url: f.webhook_url.trim() ? f.webhook_url.trim() : null,
  };
  if (f.slug.trim()) body.slug = f.slug.trim();
  if (creating) {
    for (const k of ['description', 'location', 'max_bookings_per_day', 'slot_interval_minutes', 'webhook_url']) if (body[k] === null) delete body[k];
  }
  // NaN is not JSON: send it as a string so the server names the field.
  for (const [k, v] of Object.entries(body)) if (typeof v === 'number' && Number.isNaN(v)) body[k] = '';
  return body;
}

export function EventTypeEditor({ id }: { id: number | null }) {
  const existing = useAsync(() => (id === null ? Promise.resolve(null) : get<EventType>(`/v1/event-types/${id}`)), [id]);
  const [form, setForm] = useState<Form | null>(id === null ? defaults() : null);
  const [saved, setSaved] = useState<EventType | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [justSaved, setJustSaved] = useState(false);
  const [owner, setOwner] = useState(() => new URLSearchParams(location.search).get('team') ?? '');
  useEffect(() => {
    if (existing.data) {
      setForm(fromType(existing.data));
      setSaved(existing.data);
    }
  }, [existing.data]);

  if (existing.error instanceof ApiError && existing.error.status === 404) return <Empty title="Event type not found"><a href="/app/event-types">Back to event types</a></Empty>;
  if (existing.error) return <ErrorAlert error={existing.error} />;
  if (!form) return <Loading label="Loading event type" />;

  const set = <K extends keyof Form>(k: K, v: Form[K]) => {
    setJustSaved(false);
    setForm({ ...form, [k]: v });
  };
  const setWindow = (i: number, w: WeeklyWindow | null) => set('weekly', w === null ? form.weekly.filter((_, j) => j !== i) : form.weekly.map((x, j) => (j === i ? w : x)));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = bodyOf(form, id === null);
      // A team's event type is made under its team (org slug / team slug); a personal one under the person.
      const createPath = owner ? `/v1/orgs/${owner.split('/').map(encodeURIComponent).join('/teams/')}/event-types` : '/v1/event-types';
      const result = id === null ? await post<EventType>(createPath, body) : await patch<EventType>(`/v1/event-types/${id}`, body);
      if (id === null) navigate(`/app/event-types/${result.id}?created=1`, { replace: true });
      else {
        setSaved(result);
        setForm(fromType(result));
        setJustSaved(true);
      }
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const text = (k: keyof Form, label: string, props: Record<string, unknown> = {}, hint?: string) => (
    <div class="field">
      <label for={`et-${k}`}>{label}</label>
      <input id={`et-${k}`} name={k} value={form[k] as string} onInput={(e) => set(k, e.currentTarget.value as never)} {...props} />
      {hint ? <small>{hint}</small> : null}
      <FieldError error={error} name={k} />
    </div>
  );

  return (
    <section class="view">
      <a class="back" href="/app/event-types">
        ← Event types
      </a>
      <header class="page-header">
        <h1>{id === null ? 'New event type' : form.name || 'Event type'}</h1>
      </header>
      {new URLSearchParams(location.search).get('created') ? <div class="alert success">Created. Share the booking link below.</div> : null}
      {saved ? <SharePanel type={saved} /> : null}
      <form class="stack" onSubmit={(e) => void submit(e)} data-testid="event-type-form" noValidate>
        <ErrorAlert error={error} />
        <fieldset class="card stack">
          <legend>Basics</legend>
          {id === null ? <OwnerPicker value={owner} onChange={setOwner} /> : saved?.team_id ? <TeamInfo orgId={saved.org_id} teamId={saved.team_id} /> : null}
          {text('name', 'Name', { required: true, maxLength: 100 })}
          {text('slug', 'Slug', { placeholder: 'made from the name', pattern: '[a-z0-9-]+' }, 'The last part of the booking link.')}
          <div class="field">
            <label for="et-description">Description</label>
            <textarea id="et-description" value={form.description} onInput={(e) => set('description', e.currentTarget.value)} />
            <FieldError error={error} name="description" />
          </div>
          <div class="grid-2">
            {text('duration_minutes', 'Duration (minutes)', { type: 'number', min: 5, max: 1440, inputMode: 'numeric' })}
            <div class="field">
              <label for="et-location">Kind of meeting</label>
              <select id="et-location" value={form.location_type} onChange={(e) => set('location_type', e.currentTarget.value)}>
                {Object.entries(LOCATION_LABEL).map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <div class="field">
            <label for="et-place">{form.location_type === 'in_person' ? 'Address' : form.location_type === 'video' ? 'Video link' : form.location_type === 'phone' ? 'Phone number' : 'Where'}</label>
            <input
              id="et-place"
              name="location"
              data-testid="et-place"
              maxLength={500}
              value={form.location}
              onInput={(e) => set('location', e.currentTarget.value)}
              placeholder={form.location_type === 'in_person' ? '12 Market Street, Springfield' : form.location_type === 'video' ? 'https://meet.example.com/your-room' : 'Optional'}
            />
            <small>Shown on the booking page, in the emails and in the calendar invitation.</small>
            <FieldError error={error} name="location" />
          </div>
          <label class="check">
            <input type="checkbox" checked={form.requires_confirmation} onChange={(e) => set('requires_confirmation', e.currentTarget.checked)} />
            Requires my confirmation (bookings start as pending)
          </label>
        </fieldset>

        <fieldset class="card stack">
          <legend>Weekly availability</legend>
          <div class="field">
            <label for="et-timezone">Time zone</label>
            <TimeZoneInput id="et-timezone" name="availability.timezone" value={form.timezone} onInput={(v) => set('timezone', v)} serverSaid={!!errorsOf(error)?.fields['availability.timezone']} />
            <small>IANA name. The hours below are in this zone.</small>
            <FieldError error={error} name="availability.timezone" />
          </div>
          <div class="week" data-testid="weekly-editor">
            {DAYS.map(({ day, label }) => {
              const windows = form.weekly.map((w, i) => ({ w, i })).filter((x) => x.w.day === day);
              return (
                <div class="day-row" key={day} data-day={day}>
                  <label class="check day-name">
                    <input
                      type="checkbox"
                      checked={windows.length > 0}
                      onChange={(e) =>
                        set('weekly', e.currentTarget.checked ? [...form.weekly, { day, start: '09:00', end: '17:00' }] : form.weekly.filter((w) => w.day !== day))
                      }
                    />
                    {label}
                  </label>
                  <div class="windows">
                    {windows.length === 0 ? <span class="muted">Unavailable</span> : null}
                    {windows.map(({ w, i }) => (
                      <div class="window" key={i}>
                        <input type="time" aria-label={`${label} from`} value={w.start} onInput={(e) => setWindow(i, { ...w, start: e.currentTarget.value })} />
                        <span aria-hidden="true">–</span>
                        <input
                          type="time"
                          aria-label={`${label} until`}
                          value={w.end === '24:00' ? '23:59' : w.end}
                          onInput={(e) => setWindow(i, { ...w, end: e.currentTarget.value === '23:59' ? '24:00' : e.currentTarget.value })}
                        />
                        <button type="button" class="ghost small" aria-label={`Remove ${label} ${w.start}–${w.end}`} onClick={() => setWindow(i, null)}>
                          ✕
                        </button>
                        <FieldError error={error} name={`availability.weekly.${i}.start`} />
                        <FieldError error={error} name={`availability.weekly.${i}.end`} />
                      </div>
                    ))}
                    {windows.length > 0 ? (
                      <button type="button" class="ghost small" onClick={() => set('weekly', [...form.weekly, { day, start: '13:00', end: '17:00' }])}>
                        + Add hours
                      </button>
                    ) : null}
                  </div>
                </div>
              );
            })}
          </div>
          <FieldError error={error} name="availability.weekly" />
          <div class="field">
            <label for="et-blackout">Blackout days</label>
            <textarea id="et-blackout" class="short" placeholder="2026-12-24, 2026-12-25" value={form.blackout_dates} onInput={(e) => set('blackout_dates', e.currentTarget.value)} />
            <small>Days (YYYY-MM-DD) with no bookings, separated by commas or new lines.</small>
            <FieldError error={error} name="blackout_dates" />
          </div>
        </fieldset>

        <fieldset class="card stack">
          <legend>Booking rules</legend>
          <div class="grid-2">
            {text('min_notice_hours', 'Minimum notice (hours)', { type: 'number', min: 0, inputMode: 'numeric' })}
            {text('max_advance_days', 'Bookable up to (days ahead)', { type: 'number', min: 1, inputMode: 'numeric' })}
            {text('buffer_before_minutes', 'Buffer before (minutes)', { type: 'number', min: 0, inputMode: 'numeric' })}
            {text('buffer_after_minutes', 'Buffer after (minutes)', { type: 'number', min: 0, inputMode: 'numeric' })}
            {text('max_bookings_per_day', 'Most bookings per day', { type: 'number', min: 1, inputMode: 'numeric', placeholder: 'No limit' })}
            {text('slot_interval_minutes', 'Start times every (minutes)', { type: 'number', min: 5, inputMode: 'numeric', placeholder: 'The duration' })}
          </div>
        </fieldset>

        <fieldset class="card stack">
          <legend>Webhook</legend>
          {text('webhook_url', 'Webhook URL', { type: 'url', placeholder: 'https://example.com/hooks/muster' }, 'Receives booking.created, confirmed, declined, cancelled and rescheduled, signed per Standard Webhooks.')}
          {saved?.webhook_secret ? (
            <div class="field">
              <span class="label">Signing secret</span>
              <div class="link-box">
                <code class="secret">{saved.webhook_secret}</code>
                <CopyButton text={saved.webhook_secret} />
              </div>
            </div>
          ) : null}
        </fieldset>

        <div class="row sticky-actions">
          <button type="submit" disabled={busy} data-testid="save-event-type">
            {busy ? 'Saving…' : id === null ? 'Create event type' : 'Save changes'}
          </button>
          <a class="button secondary" href="/app/event-types">
            Cancel
          </a>
          {justSaved ? <span class="muted" role="status">All changes saved</span> : null}
        </div>
      </form>
    </section>
  );
}
