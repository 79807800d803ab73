// Event types: yours and your teams', each with its public booking link and a Share panel.
import { useState } from 'preact/hooks';
import { del, get } from '../../lib/api';
import type { EventType } from '../types';
import { CopyButton, Empty, ErrorAlert, Loading, PageHeader, useAsync } from '../ui';
import { SharePanel } from './share-panel';

export const LOCATION_LABEL: Record<string, string> = { video: 'Video call', phone: 'Phone', in_person: 'In person', other: 'Other' };

export function EventTypesView() {
  const list = useAsync(() => get<{ event_types: EventType[] }>('/v1/event-types').then((r) => r.event_types), []);
  const [error, setError] = useState<unknown>(null);
  const [sharing, setSharing] = useState<number | null>(null);
  const remove = async (t: EventType) => {
    if (!confirm(`Delete "${t.name}"? Its booking link stops working; existing bookings are kept.`)) return;
    try {
      await del(`/v1/event-types/${t.id}`);
      list.setData((l) => l?.filter((x) => x.id !== t.id));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="view">
      <PageHeader title="Event types" sub="What people can book with you, and when.">
        <a class="button" href="/app/event-types/new" data-testid="new-event-type">
          New event type
        </a>
      </PageHeader>
      <ErrorAlert error={list.error ?? error} />
      {list.loading && !list.data ? <Loading label="Loading event types" /> : null}
      {list.data && list.data.length === 0 ? (
        <Empty title="No event types yet">
          Create one, then share its booking link. <a href="/app/event-types/new">Create an event type</a>
        </Empty>
      ) : null}
      <ul class="cards" data-testid="event-type-list">
        {list.data?.map((t) => {
          const link = new URL(t.booking_url, location.origin);
          return (
            <li key={t.id} class="card stack event-type" data-testid="event-type-row">
              <div class="row">
                <h2>{t.name}</h2>
                {t.team_id ? <span class="badge brand">Team</span> : null}
                {t.requires_confirmation ? <span class="badge warn">Needs confirmation</span> : null}
                {t.locked ? <span class="badge danger" title="Over your plan's limit: not bookable, not editable">Locked</span> : null}
              </div>
              <p class="muted">
                {t.duration_minutes} min · {LOCATION_LABEL[t.location_type]} · {t.availability.weekly.length} weekly {t.availability.weekly.length === 1 ? 'window' : 'windows'} ({t.availability.timezone})
              </p>
              <div class="link-box">
                <a href={link.pathname} target="_blank" rel="noopener" class="mono" data-testid="booking-link">
                  {link.pathname}
                </a>
                <CopyButton text={t.booking_url} />
              </div>
              <div class="row">
                <a class="button secondary small" href={`/app/event-types/${t.id}`}>
                  Edit
                </a>
                <button type="button" class="secondary small" aria-expanded={sharing === t.id} data-testid="share-toggle" onClick={() => setSharing(sharing === t.id ? null : t.id)}>
                  Share
                </button>
                <button type="button" class="secondary small danger-text" onClick={() => void remove(t)}>
                  Delete
                </button>
              </div>
              {sharing === t.id ? <SharePanel type={t} /> : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
