// The public booking page: /assign/<user>/<event>, /book/<user>/<event>, /assign/<org>/<team>/<event>,
// /book/<org>/<team>/<event>. Event facts, a day and time picker in the visitor's zone, the form, and
// the confirmation; in an iframe (/embed.js) it also tells the embedding page `muster:booked`.
import { AddToCalendar } from '../lib/add-to-calendar';
import { failureText, locale, startPage, t, visitorTag, type MessageKey } from '../lib/i18n';
import { calendarEventOf } from './calendar-event';
import { Place } from './place';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, post, qs, randomId } from '../lib/api';
import { browserZone, formatDate, formatTime, setDateLocale } from '../lib/format';
import '../styles/base.css';
import './book.css';
import { embedded, embedMode, postToParent, reportHeight } from './frame';
import { LoadErrorPanel } from './load-error';
import { Picker, zoneLabel } from './picker';
import { durationLabel, type Booking, type PublicEventType, type Slot, type SlotsAnswer } from './types';

/** The page's address: which API paths it reads and posts to. */
export function addressOf(pathname: string): { info: string; slots: string; submit: string } | undefined {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const [kind, ...rest] = parts;
  if ((kind !== 'assign' && kind !== 'book') || (rest.length !== 2 && rest.length !== 3)) return undefined;
  const tail = rest.map(encodeURIComponent).join('/');
  // The POST matches the page's own form: /assign/... → /v1/assign/..., /book/... → /v1/book/...
  return { info: `/v1/book/${tail}`, slots: `/v1/slots/${tail}`, submit: `/v1/${kind}/${tail}` };
}

const address = addressOf(location.pathname);

/** The server's schema messages ("must match format \"email\"") in words for a visitor. */
const FRIENDLY: Record<string, MessageKey> = {
  attendee_name: 'form.err.name',
  attendee_email: 'form.err.email',
  notes: 'form.err.notes',
};

type Step = { name: 'pick'; date?: string } | { name: 'form'; slot: Slot; date: string } | { name: 'done'; booking: Booking };

function EventFacts({ et }: { et: PublicEventType }) {
  return (
    <aside class="facts">
      <p class="host" data-testid="host">
        {et.org_name && et.team_name ? `${et.org_name} · ${et.team_name}` : et.host_name}
      </p>
      <h1 data-testid="event-name">{et.name}</h1>
      <ul class="meta">
        <li>
          <span aria-hidden="true">◷</span> {durationLabel(et.duration_minutes)}
        </li>
        <li data-testid="event-location">
          <span aria-hidden="true">◎</span> {t(`loc.${et.location_type}`)}
          {et.location ? (
            <>
              {': '}
              <Place text={et.location} />
            </>
          ) : null}
        </li>
        {et.requires_confirmation && (
          <li>
            <span aria-hidden="true">✓</span> {t('facts.confirms')}
          </li>
        )}
      </ul>
      {et.description && <p class="description">{et.description}</p>}
    </aside>
  );
}

function BookingForm({ et, slot, zone, onBack, onDone, onTaken }: { et: PublicEventType; slot: Slot; zone: string; onBack: () => void; onDone: (b: Booking) => void; onTaken: () => void }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [notes, setNotes] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | Error | null>(null);
  // One key per attempt at this slot: a retried submit (double click, flaky network) books once.
  const key = useRef(randomId('bk-'));
  const nameRef = useRef<HTMLInputElement>(null);
  useEffect(() => nameRef.current?.focus({ preventScroll: true }), []);

  async function submit(e: Event) {
    e.preventDefault();
    if (busy || !address) return;
    setBusy(true);
    setError(null);
    try {
      // The visitor's language goes with the booking, so the emails follow it (issue 20).
      const language = visitorTag();
      const body = { attendee_name: name, attendee_email: email, start_time: slot.start_time, timezone: zone, ...(notes.trim() ? { notes } : {}), ...(language ? { language } : {}) };
      const booking = await post<Booking>(address.submit, body, { idempotencyKey: key.current });
      onDone(booking);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.body.code === 'slot_unavailable') {
        onTaken();
        return;
      }
      if (err instanceof ApiError && err.status === 422) key.current = randomId('bk-');
      setError(err instanceof Error ? err : new Error(String(err)));
      setBusy(false);
    }
  }
  const fieldError = (f: string) => {
    const raw = error instanceof ApiError && error.status === 422 ? error.field(f) : undefined;
    return raw === undefined ? undefined : FRIENDLY[f] ? t(FRIENDLY[f]) : raw;
  };
  const general = error && !(error instanceof ApiError && error.status === 422 && ['attendee_name', 'attendee_email', 'notes'].some((f) => fieldError(f))) ? failureText(error) : undefined;

  return (
    <form class="booking-form" onSubmit={(e) => void submit(e)} noValidate data-testid="booking-form">
      <button type="button" class="ghost back" onClick={onBack}>
        {t('form.back')}
      </button>
      <h2>{t('form.title')}</h2>
      <p class="when" data-testid="form-time">
        <strong>{formatDate(slot.start_time, zone)}</strong>
        <br />
        {formatTime(slot.start_time, zone)} – {formatTime(slot.end_time, zone)} <span class="muted">· {zoneLabel(zone)}</span>
      </p>
      {general && (
        <div class="alert error" role="alert" data-testid="form-error">
          {general}
        </div>
      )}
      <div class="field">
        <label for="attendee_name">{t('form.name')}</label>
        <input id="attendee_name" name="attendee_name" ref={nameRef} autoComplete="name" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} aria-invalid={!!fieldError('attendee_name')} aria-describedby="attendee_name-error" />
        {fieldError('attendee_name') && (
          <p class="field-error" id="attendee_name-error" data-testid="error-attendee_name">
            {fieldError('attendee_name')}
          </p>
        )}
      </div>
      <div class="field">
        <label for="attendee_email">{t('form.email')}</label>
        <input id="attendee_email" name="attendee_email" type="email" autoComplete="email" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} aria-invalid={!!fieldError('attendee_email')} aria-describedby="attendee_email-error" />
        {fieldError('attendee_email') && (
          <p class="field-error" id="attendee_email-error" data-testid="error-attendee_email">
            {fieldError('attendee_email')}
          </p>
        )}
      </div>
      <div class="field">
        <label for="notes">
          {t('form.notes')} <span class="muted optional">{t('common.optional')}</span>
        </label>
        <textarea id="notes" name="notes" maxLength={5000} placeholder={t('form.notesHint')} value={notes} onInput={(e) => setNotes((e.target as HTMLTextAreaElement).value)} />
        {fieldError('notes') && <p class="field-error">{fieldError('notes')}</p>}
      </div>
      <button type="submit" class="block submit" disabled={busy} data-testid="submit">
        {busy ? t('form.booking') : et.requires_confirmation ? t('form.request') : t('form.confirm')}
      </button>
    </form>
  );
}

function Confirmation({ et, booking, zone }: { et: PublicEventType; booking: Booking; zone: string }) {
  const pending = booking.status === 'pending';
  const target = embedded ? '_blank' : undefined;
  return (
    <section class="confirmation" data-testid="confirmation" data-status={booking.status} aria-live="polite">
      <div class={`mark ${pending ? 'pending' : 'ok'}`} aria-hidden="true">
        {pending ? '◷' : '✓'}
      </div>
      <h1 data-testid="confirmation-title">{pending ? t('done.pending') : t('done.confirmed')}</h1>
      <p class="muted">
        {pending ? t('done.pendingBefore', { host: et.host_name }) : t('done.confirmedBefore', { host: et.host_name })}
        <strong class="email">{booking.attendee_email}</strong>
        {pending ? t('done.pendingAfter') : t('done.confirmedAfter')}
      </p>
      <dl class="summary">
        <dt>{t('done.what')}</dt>
        <dd>{et.name}</dd>
        <dt>{t('done.when')}</dt>
        <dd data-testid="confirmation-time">
          {formatDate(booking.start_time, zone)}
          <br />
          {formatTime(booking.start_time, zone)} – {formatTime(booking.end_time, zone)}
          <br />
          <span class="muted">{zoneLabel(zone)}</span>
        </dd>
        {et.location ? (
          <>
            <dt>{t('facts.where')}</dt>
            <dd data-testid="confirmation-location">
              <Place text={et.location} />
            </dd>
          </>
        ) : null}
        <dt>{t('done.who')}</dt>
        <dd>{booking.attendee_name}</dd>
      </dl>
      <AddToCalendar event={calendarEventOf(et, booking)} />
      <p class="manage-links">
        {t('done.change')}{' '}
        <a href={booking.reschedule_url} target={target} rel="noopener" data-testid="reschedule-link">
          {t('done.reschedule')}
        </a>{' '}
        {t('done.or')}{' '}
        <a href={booking.cancel_url} target={target} rel="noopener" data-testid="cancel-link">
          {t('done.cancel')}
        </a>
        {t('done.end')}
      </p>
    </section>
  );
}

function Page() {
  const [et, setEt] = useState<PublicEventType | null>(null);
  const [loadError, setLoadError] = useState<{ status: number; message: string } | null>(null);
  const [zone, setZone] = useState(browserZone());
  const [step, setStep] = useState<Step>({ name: 'pick' });
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    if (!address) {
      setLoadError({ status: 404, message: t('book.invalidLink') });
      return;
    }
    get<PublicEventType>(address.info)
      .then((e) => {
        setEt(e);
        document.title = `${e.name} · ${e.team_name ?? e.host_name}`;
      })
      .catch((err: unknown) =>
        setLoadError({ status: err instanceof ApiError ? err.status : 0, message: failureText(err) }),
      );
  }, []);

  useEffect(() => {
    if (step.name !== 'done') return;
    const b = step.booking;
    postToParent({
      type: 'muster:booked',
      payload: {
        id: b.id,
        status: b.status,
        requires_confirmation: b.requires_confirmation,
        attendee_name: b.attendee_name,
        start_time: b.start_time,
        end_time: b.end_time,
        event_type_id: b.event_type_id,
        timezone: b.timezone,
      },
    });
  }, [step]);

  if (loadError) return <LoadErrorPanel failure={loadError} notFoundTitle={t('book.notFound')} notFoundText={t('book.notFoundText')} />;
  if (!et || !address) {
    return (
      <main class="book-page">
        <section class="panel state" aria-busy="true">
          <div class="spinner" aria-hidden="true" />
          <p class="muted">{t('common.loading')}</p>
        </section>
      </main>
    );
  }

  const load = async (date: string, z: string) => (await get<SlotsAnswer>(`${address.slots}${qs({ date, timezone: z })}`)).slots;
  return (
    <main class="book-page">
      <section class={`panel ${step.name}`}>
        {step.name === 'done' ? (
          <Confirmation et={et} booking={step.booking} zone={zone} />
        ) : (
          <>
            <EventFacts et={et} />
            <div class="main-col">
              {notice && (
                <div class="alert info notice" role="status" data-testid="notice">
                  {notice}
                </div>
              )}
              {step.name === 'pick' ? (
                <>
                  <h2 class="step-title">{t('book.pick')}</h2>
                  <Picker
                    zone={zone}
                    onZone={setZone}
                    from={et.bookable_from}
                    until={et.bookable_until}
                    load={load}
                    initialDate={step.date}
                    onPick={(slot, date) => {
                      setNotice(null);
                      setStep({ name: 'form', slot, date });
                    }}
                  />
                </>
              ) : (
                <BookingForm
                  et={et}
                  slot={step.slot}
                  zone={zone}
                  onBack={() => setStep({ name: 'pick', date: step.date })}
                  onDone={(booking) => setStep({ name: 'done', booking })}
                  onTaken={() => {
                    setNotice(t('book.taken'));
                    setStep({ name: 'pick', date: step.date });
                  }}
                />
              )}
            </div>
          </>
        )}
      </section>
      {!embedMode && <footer class="powered">{t('common.powered')}</footer>}
    </main>
  );
}

startPage('book.title');
setDateLocale(locale());
if (embedMode) document.documentElement.classList.add('embed');
render(<Page />, document.getElementById('root')!);
reportHeight();
