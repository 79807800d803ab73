// Create a schedule or edit its layers. New layers take effect when saved: the past keeps the
// layers it had (the API keeps every version).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, patch, post } from '../../../lib/api';
import { browserZone } from '../../../lib/format';
import { navigate } from '../../router';
import { TimeZoneInput } from '../../timezone-input';
import type { Day, Layer, Member, Restriction, Schedule } from '../../types';
import { Empty, ErrorAlert, errorsOf, FieldError, Loading, useAsync } from '../../ui';
import { localInput } from './schedule';

const DAYS: Day[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAY_LABEL: Record<Day, string> = { mon: 'Mon', tue: 'Tue', wed: 'Wed', thu: 'Thu', fri: 'Fri', sat: 'Sat', sun: 'Sun' };

interface LayerForm {
  id?: string;
  name: string;
  start: string;
  unit: Layer['turn']['unit'];
  length: string;
  users: number[];
  restrictions: Restriction[];
}
interface Form {
  name: string;
  slug: string;
  description: string;
  time_zone: string;
  layers: LayerForm[];
}

const nextMonday9 = () => {
  const d = new Date();
  d.setDate(d.getDate() + ((8 - d.getDay()) % 7 || 7));
  d.setHours(9, 0, 0, 0);
  return localInput(d.getTime());
};
const newLayer = (n: number): LayerForm => ({ name: `Layer ${n}`, start: nextMonday9(), unit: 'week', length: '1', users: [], restrictions: [] });
const fromSchedule = (s: Schedule): Form => ({
  name: s.name,
  slug: s.slug,
  description: s.description ?? '',
  time_zone: s.time_zone,
  // A start given with an offset is shown as its local time: the form's value is a local date-time.
  layers: s.layers.map((l) => ({ id: l.id, name: l.name, start: l.start.slice(0, 16), unit: l.turn.unit, length: String(l.turn.length), users: [...l.users], restrictions: l.restrictions.map((r) => ({ ...r })) })),
});

function bodyOf(f: Form, creating: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: f.name,
    time_zone: f.time_zone.trim(),
    description: f.description.trim() ? f.description : null,
    layers: f.layers.map((l) => ({
      ...(l.id ? { id: l.id } : {}),
      name: l.name,
      start: l.start,
      turn: { unit: l.unit, length: l.length.trim() === '' ? '' : Number(l.length) },
      users: l.users,
      restrictions: l.restrictions,
    })),
  };
  if (f.slug.trim()) body.slug = f.slug.trim();
  if (creating && body.description === null) delete body.description;
  return body;
}

function LayerEditor({ l, i, count, members, error, set, move, remove }: { l: LayerForm; i: number; count: number; members: Member[]; error: unknown; set: (l: LayerForm) => void; move: (d: -1 | 1) => void; remove: () => void }) {
  const [pick, setPick] = useState('');
  const name = (id: number) => members.find((m) => m.user_id === id)?.name ?? `User ${id}`;
  const f = `layers.${i}`;
  const setR = (j: number, r: Restriction | null) => set({ ...l, restrictions: r === null ? l.restrictions.filter((_, k) => k !== j) : l.restrictions.map((x, k) => (k === j ? r : x)) });
  return (
    <fieldset class="card stack layer" data-testid="layer-editor">
      <legend>
        Layer {i + 1}
        {i === count - 1 && count > 1 ? ' (wins where it has someone)' : ''}
      </legend>
      <div class="grid-2">
        <div class="field">
          <label for={`l${i}-name`}>Name</label>
          <input id={`l${i}-name`} value={l.name} onInput={(e) => set({ ...l, name: e.currentTarget.value })} data-testid="layer-name" />
          <FieldError error={error} name={`${f}.name`} />
        </div>
        <div class="field">
          <label for={`l${i}-start`}>First handoff (schedule's time zone)</label>
          <input id={`l${i}-start`} type="datetime-local" value={l.start} onInput={(e) => set({ ...l, start: e.currentTarget.value })} data-testid="layer-start" />
          <FieldError error={error} name={`${f}.start`} />
        </div>
        <div class="field">
          <label for={`l${i}-length`}>Each turn lasts</label>
          <div class="row tight">
            <input id={`l${i}-length`} type="number" min={1} inputMode="numeric" value={l.length} onInput={(e) => set({ ...l, length: e.currentTarget.value })} data-testid="layer-length" />
            <label class="visually-hidden" for={`l${i}-unit`}>
              Unit
            </label>
            <select id={`l${i}-unit`} class="compact" value={l.unit} onChange={(e) => set({ ...l, unit: e.currentTarget.value as LayerForm['unit'] })} data-testid="layer-unit">
              <option value="hour">hours</option>
              <option value="day">days</option>
              <option value="week">weeks</option>
            </select>
          </div>
          <FieldError error={error} name={`${f}.turn.length`} />
        </div>
      </div>
      <div class="field">
        <span class="label">People, in turn order</span>
        <ol class="rota" data-testid="layer-users">
          {l.users.map((u, j) => (
            <li key={`${u}-${j}`}>
              {name(u)}
              <button type="button" class="ghost small" aria-label={`Remove ${name(u)} from turn ${j + 1}`} onClick={() => set({ ...l, users: l.users.filter((_, k) => k !== j) })}>
                ✕
              </button>
              <FieldError error={error} name={`${f}.users.${j}`} />
            </li>
          ))}
        </ol>
        <div class="row tight">
          <label class="visually-hidden" for={`l${i}-add`}>
            Add a person
          </label>
          <select id={`l${i}-add`} class="compact" value={pick} onChange={(e) => setPick(e.currentTarget.value)} data-testid="layer-add-user">
            <option value="">Add a person…</option>
            {members.map((m) => (
              <option key={m.user_id} value={String(m.user_id)}>
                {m.name}
              </option>
            ))}
          </select>
          <button type="button" class="secondary small" disabled={!pick} onClick={() => (set({ ...l, users: [...l.users, Number(pick)] }), setPick(''))} data-testid="layer-add-user-button">
            Add
          </button>
        </div>
        <FieldError error={error} name={`${f}.users`} />
      </div>
      <div class="field">
        <span class="label">Only on call during (leave empty for all the time)</span>
        {l.restrictions.map((r, j) => (
          <div class="window restriction" key={j}>
            {DAYS.map((d) => (
              <label class="check" key={d}>
                <input type="checkbox" checked={!r.days || r.days.includes(d)} onChange={(e) => setR(j, { ...r, days: e.currentTarget.checked ? [...(r.days ?? []), d] : (r.days ?? DAYS).filter((x) => x !== d) })} />
                {DAY_LABEL[d]}
              </label>
            ))}
            <input type="time" aria-label="From" value={r.start_time} onInput={(e) => setR(j, { ...r, start_time: e.currentTarget.value })} />
            <span aria-hidden="true">–</span>
            <input type="time" aria-label="Until (past midnight when earlier)" value={r.end_time} onInput={(e) => setR(j, { ...r, end_time: e.currentTarget.value })} />
            <button type="button" class="ghost small" aria-label={`Remove window ${j + 1}`} onClick={() => setR(j, null)}>
              ✕
            </button>
            <FieldError error={error} name={`${f}.restrictions.${j}.start_time`} />
            <FieldError error={error} name={`${f}.restrictions.${j}.end_time`} />
          </div>
        ))}
        <button type="button" class="ghost small" onClick={() => set({ ...l, restrictions: [...l.restrictions, { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_time: '09:00', end_time: '17:00' }] })}>
          + Add a time window
        </button>
      </div>
      <div class="row">
        <button type="button" class="secondary small" disabled={i === 0} onClick={() => move(-1)}>
          Move up
        </button>
        <button type="button" class="secondary small" disabled={i === count - 1} onClick={() => move(1)}>
          Move down
        </button>
        <button type="button" class="ghost small danger-text" onClick={remove}>
          Remove layer
        </button>
      </div>
    </fieldset>
  );
}

export function ScheduleEditor({ orgSlug, scheduleRef }: { orgSlug: string; scheduleRef: string | null }) {
  const orgBase = `/v1/orgs/${encodeURIComponent(orgSlug)}`;
  const existing = useAsync(() => (scheduleRef === null ? Promise.resolve(null) : get<Schedule>(`${orgBase}/schedules/${encodeURIComponent(scheduleRef)}`)), [scheduleRef]);
  const members = useAsync(() => get<{ members: Member[] }>(`${orgBase}/members`).then((r) => r.members), [orgSlug]);
  const [form, setForm] = useState<Form | null>(scheduleRef === null ? { name: '', slug: '', description: '', time_zone: browserZone(), layers: [newLayer(1)] } : null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (existing.data) setForm(fromSchedule(existing.data));
  }, [existing.data]);
  if (existing.error instanceof ApiError && existing.error.status === 404) return <Empty title="Schedule not found"><a href="/app/oncall">Back to on call</a></Empty>;
  if (existing.error) return <ErrorAlert error={existing.error} />;
  if (!form) return <Loading label="Loading schedule" />;
  const set = (patchForm: Partial<Form>) => setForm({ ...form, ...patchForm });
  const setLayer = (i: number, l: LayerForm | null) => set({ layers: l === null ? form.layers.filter((_, j) => j !== i) : form.layers.map((x, j) => (j === i ? l : x)) });
  const move = (i: number, d: -1 | 1) => {
    const layers = [...form.layers];
    [layers[i], layers[i + d]] = [layers[i + d]!, layers[i]!];
    set({ layers });
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = bodyOf(form, scheduleRef === null);
      const saved = scheduleRef === null ? await post<Schedule>(`${orgBase}/schedules`, body) : await patch<Schedule>(`${orgBase}/schedules/${encodeURIComponent(scheduleRef)}`, body);
      navigate(`/app/oncall/${orgSlug}/${saved.slug}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  const back = scheduleRef === null ? '/app/oncall' : `/app/oncall/${orgSlug}/${scheduleRef}`;
  return (
    <section class="view">
      <a class="back" href={back}>
        ← {scheduleRef === null ? 'On call' : form.name}
      </a>
      <header class="page-header">
        <h1>{scheduleRef === null ? 'New schedule' : `Edit ${form.name}`}</h1>
      </header>
      <form class="stack" onSubmit={(e) => void submit(e)} data-testid="schedule-form" noValidate>
        <ErrorAlert error={error} />
        <fieldset class="card stack">
          <legend>Schedule</legend>
          <div class="field">
            <label for="s-name">Name</label>
            <input id="s-name" name="name" value={form.name} maxLength={100} onInput={(e) => set({ name: e.currentTarget.value })} data-testid="schedule-name" />
            <FieldError error={error} name="name" />
          </div>
          <div class="field">
            <label for="s-zone">Time zone of the rotations</label>
            <TimeZoneInput id="s-zone" name="time_zone" value={form.time_zone} onInput={(v) => set({ time_zone: v })} serverSaid={!!errorsOf(error)?.fields.time_zone} />
            <small>Handoffs keep their local clock time in this zone across daylight saving.</small>
            <FieldError error={error} name="time_zone" />
          </div>
          <div class="field">
            <label for="s-description">Description</label>
            <textarea id="s-description" class="short" value={form.description} onInput={(e) => set({ description: e.currentTarget.value })} />
          </div>
        </fieldset>
        <p class="muted">Layers in order: a later layer wins wherever it has someone on call; where it has nobody, the ones above show through.{scheduleRef === null ? '' : ' Changes take effect when you save; the past keeps the layers it had.'}</p>
        {form.layers.map((l, i) => (
          <LayerEditor key={l.id ?? i} l={l} i={i} count={form.layers.length} members={members.data ?? []} error={error} set={(x) => setLayer(i, x)} move={(d) => move(i, d)} remove={() => setLayer(i, null)} />
        ))}
        <FieldError error={error} name="layers" />
        <div class="row sticky-actions">
          <button type="button" class="secondary" onClick={() => set({ layers: [...form.layers, newLayer(form.layers.length + 1)] })} data-testid="add-layer">
            + Add layer
          </button>
          <span class="spacer" />
          <button type="submit" disabled={busy} data-testid="save-schedule">
            {busy ? 'Saving…' : scheduleRef === null ? 'Create schedule' : 'Save changes'}
          </button>
        </div>
      </form>
    </section>
  );
}
