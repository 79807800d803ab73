// The attendee's page behind cancel_url and reschedule_url: /bookings/manage/<token>[?action=cancel|reschedule].
// Shows the booking in the visitor's zone; cancels it (optional reason, a confirm step) or moves it
// to another open slot of the same host. Cancelled and declined bookings are shown as such.
import { AddToCalendar } from '../lib/add-to-calendar';
import { failureText, locale, startPage, t, type MessageKey } from '../lib/i18n';
import { calendarEventOf } from '../book/calendar-event';
import { Place } from '../book/place';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, post, qs } from '../lib/api';
import { browserZone, formatDate, formatTime, setDateLocale } from '../lib/format';
import '../styles/base.css';
import '../book/book.css';
import './manage.css';
import { LoadErrorPanel } from '../book/load-error';
import { Picker, zoneLabel } from '../book/picker';
import { durationLabel, type Booking, type PublicEventType, type Slot, type SlotsAnswer } from '../book/types';

const token = decodeURIComponent(location.pathname.split('/').filter(Boolean)[2] ?? '');
const base = `/v1/bookings/manage/${encodeURIComponent(token)}`;
const initialAction = new URLSearchParams(location.search).get('action');

type Mode = { name: 'view' } | { name: 'cancel' } | { name: 'reschedule'; date?: string } | { name: 'confirm-move'; slot: Slot; date: string };

const STATUS: Record<Booking['status'], { label: MessageKey; cls: string }> = {
  confirmed: { label: 'status.confirmed', cls: 'ok' },
  pending: { label: 'status.pending', cls: 'warn' },
  cancelled: { label: 'status.cancelled', cls: 'danger' },
  declined: { label: 'status.declined', cls: 'danger' },
};

function When({ b, zone }: { b: { start_time: string; end_time: string }; zone: string }) {
  return (
    <>
      {formatDate(b.start_time, zone)}
      <br />
      {formatTime(b.start_time, zone)} – {formatTime(b.end_time, zone)} <span class="muted">· {zoneLabel(zone)}</span>
    </>
  );
}

function Page() {
  const [booking, setBooking] = useState<Booking | null>(null);
  const [et, setEt] = useState<PublicEventType | null>(null);
  const [loadError, setLoadError] = useState<{ status: number; message: string } | null>(null);
  const [zone, setZone] = useState(browserZone());
  const [mode, setMode] = useState<Mode>({ name: 'view' });
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [flash, setFlash] = useState<string | null>(null);

  useEffect(() => {
    if (!token) {
      setLoadError({ status: 404, message: '' });
      return;
    }
    Promise.all([get<Booking>(base), get<PublicEventType>(`${base}/event`).catch(() => null)])
      .then(([b, e]) => {
        setBooking(b);
        setEt(e);
        const active = (b.status === 'confirmed' || b.status === 'pending') && Date.parse(b.end_time) > Date.now();
        if (active && initialAction === 'cancel') setMode({ name: 'cancel' });
        if (active && initialAction === 'reschedule' && e) setMode({ name: 'reschedule' });
      })
      .catch((err: unknown) => setLoadError({ status: err instanceof ApiError ? err.status : 0, message: failureText(err) }));
  }, []);

  if (loadError) return <LoadErrorPanel failure={loadError} notFoundTitle={t('manage.invalid')} notFoundText={t('manage.invalidText')} />;
  if (!booking) {
    return (
      <main class="book-page">
        <section class="panel state" aria-busy="true">
          <div class="spinner" aria-hidden="true" />
          <p class="muted">{t('manage.loading')}</p>
        </section>
      </main>
    );
  }

  const b = booking;
  const active = b.status === 'confirmed' || b.status === 'pending';
  const past = Date.parse(b.end_time) <= Date.now();
  const status = STATUS[b.status];

  async function cancel(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const after = await post<Booking>(`${base}/cancel`, reason.trim() ? { reason: reason.trim() } : {});
      setBooking(after);
      setMode({ name: 'view' });
      setFlash(null);
    } catch (err) {
      setError(failureText(err));
    } finally {
      setBusy(false);
    }
  }

  async function move(slot: Slot, date: string) {
    setBusy(true);
    setError(null);
    try {
      const after = await post<Booking>(`${base}/reschedule`, { start_time: slot.start_time });
      setBooking(after);
      setMode({ name: 'view' });
      setFlash(t('manage.moved'));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.body.code === 'slot_unavailable') {
        setMode({ name: 'reschedule', date });
        setError(t('manage.taken'));
      } else setError(failureText(err));
    } finally {
      setBusy(false);
    }
  }

  const load = async (date: string, z: string) => (await get<SlotsAnswer>(`${base}/slots${qs({ date, timezone: z })}`)).slots;

  return (
    <main class="book-page manage-page">
      <section class="panel manage" data-testid="manage" data-status={b.status}>
        <header class="manage-head">
          <span class={`badge ${status.cls}`} data-testid="status">
            {t(status.label)}
          </span>
          <h1 data-testid="event-name">{et?.name ?? t('manage.title')}</h1>
          {et && <p class="muted host">{t('manage.with', { host: et.host_name })}</p>}
        </header>

        {flash && (
          <div class="alert success" role="status" data-testid="flash">
            {flash}
          </div>
        )}
        {b.status === 'cancelled' && (
          <div class="alert error" role="status" data-testid="cancelled-note">
            {t('manage.cancelledNote')}
          </div>
        )}
        {b.status === 'declined' && (
          <div class="alert error" role="status">
            {t('manage.declinedNote')}
          </div>
        )}
        {b.status === 'pending' && (
          <div class="alert info" role="status">
            {t('manage.pendingNote')}
          </div>
        )}

        <dl class={`summary ${active ? '' : 'inactive'}`} hidden={mode.name === 'confirm-move'}>
          <dt>{t('manage.when')}</dt>
          <dd data-testid="booking-time">
            <When b={b} zone={zone} />
          </dd>
          {et && (
            <>
              <dt>{t('manage.length')}</dt>
              <dd>{durationLabel(et.duration_minutes)}</dd>
              <dt>{t('facts.where')}</dt>
              <dd data-testid="manage-location">
                {t(`loc.${et.location_type}`)}
                {et.location ? (
                  <>
                    <br />
                    <Place text={et.location} />
                  </>
                ) : null}
              </dd>
            </>
          )}
          <dt>{t('manage.name')}</dt>
          <dd>
            {b.attendee_name}
            <br />
            <span class="muted">{b.attendee_email}</span>
          </dd>
          {b.notes && (
            <>
              <dt>{t('manage.notes')}</dt>
              <dd class="notes">{b.notes}</dd>
            </>
          )}
        </dl>

        {error && mode.name !== 'reschedule' && (
          <div class="alert error" role="alert" data-testid="error">
            {error}
          </div>
        )}

        {active && !past && et && mode.name === 'view' ? <AddToCalendar event={calendarEventOf(et, b)} /> : null}

        {active && past && <p class="muted">{t('manage.past')}</p>}

        {active && !past && mode.name === 'view' && (
          <div class="actions">
            {et && (
              <button type="button" class="secondary" data-testid="reschedule" onClick={() => { setError(null); setFlash(null); setMode({ name: 'reschedule' }); }}>
                {t('manage.reschedule')}
              </button>
            )}
            <button type="button" class="secondary danger-text" data-testid="cancel" onClick={() => { setError(null); setFlash(null); setMode({ name: 'cancel' }); }}>
              {t('manage.cancel')}
            </button>
          </div>
        )}

        {active && !past && mode.name === 'cancel' && (
          <form class="cancel-form" onSubmit={(e) => void cancel(e)} data-testid="cancel-form">
            <h2>{t('manage.cancelTitle')}</h2>
            <div class="field">
              <label for="reason">
                {t('manage.reason')} <span class="muted optional">{t('manage.reasonHint')}</span>
              </label>
              <textarea id="reason" maxLength={2000} value={reason} onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)} />
            </div>
            <div class="actions">
              <button type="submit" class="danger" disabled={busy} data-testid="confirm-cancel">
                {busy ? t('manage.cancelling') : t('manage.yesCancel')}
              </button>
              <button type="button" class="secondary" disabled={busy} onClick={() => setMode({ name: 'view' })}>
                {t('manage.keep')}
              </button>
            </div>
          </form>
        )}

        {active && !past && et && mode.name === 'reschedule' && (
          <div class="reschedule" data-testid="reschedule-picker">
            <div class="row">
              <h2>{t('manage.pickNew')}</h2>
              <span class="spacer" />
              <button type="button" class="ghost" onClick={() => { setError(null); setMode({ name: 'view' }); }}>
                {t('manage.back')}
              </button>
            </div>
            {error && (
              <div class="alert error" role="alert" data-testid="error">
                {error}
              </div>
            )}
            <Picker zone={zone} onZone={setZone} from={et.bookable_from} until={et.bookable_until} load={load} initialDate={mode.date} onPick={(slot, date) => { setError(null); setMode({ name: 'confirm-move', slot, date }); }} />
          </div>
        )}

        {active && !past && mode.name === 'confirm-move' && (
          <div class="confirm-move" data-testid="confirm-move">
            <h2>{t('manage.moveTitle')}</h2>
            <div class="move">
              <div>
                <small>{t('manage.from')}</small>
                <p class="old">
                  <When b={b} zone={zone} />
                </p>
              </div>
              <div>
                <small>{t('manage.to')}</small>
                <p data-testid="new-time">
                  <When b={mode.slot} zone={zone} />
                </p>
              </div>
            </div>
            <div class="actions">
              <button type="button" disabled={busy} data-testid="confirm-move-button" onClick={() => void move(mode.slot, mode.date)}>
                {busy ? t('manage.moving') : t('manage.confirmMove')}
              </button>
              <button type="button" class="secondary" disabled={busy} onClick={() => setMode({ name: 'reschedule', date: mode.date })}>
                {t('manage.pickAnother')}
              </button>
            </div>
          </div>
        )}

        {!active && et && (
          <p class="rebook">
            <a class="button secondary" href={et.booking_path} data-testid="book-again">
              {t('manage.bookAgain')}
            </a>
          </p>
        )}
      </section>
      <footer class="powered">{t('common.powered')}</footer>
    </main>
  );
}

startPage('manage.title');
setDateLocale(locale());
render(<Page />, document.getElementById('root')!);
