// An org's escalation policies (docs/paging.md): who is paged for an incident, level after level,
// until someone acknowledges. The list says each policy in words and where it is used; admins and
// owners create, edit and delete them (a policy in use is refused with the API's 409 message).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, del, get, patch, post } from '../../lib/api';
import { navigate } from '../router';
import { useSession } from '../session';
import type { DispatchSettings, EscalationLevel, EscalationPolicy, EscalationTarget, Integration, Member, Schedule, Team } from '../types';
import { Empty, ErrorAlert, FieldError, Loading, PageHeader, useAsync } from '../ui';

type TargetType = EscalationTarget['type'];

/** The org's people, schedules and teams a level may target, with their names. */
export interface Directory {
  members: Member[];
  schedules: Schedule[];
  teams: Team[];
}

const TYPE_WORD: Record<TargetType, string> = { user: 'person', schedule: 'schedule', team: 'team', nearest: 'nearest' };

export function loadDirectory(orgSlug: string): Promise<Directory> {
  const base = `/v1/orgs/${encodeURIComponent(orgSlug)}`;
  return Promise.all([
    get<{ members: Member[] }>(`${base}/members`).then((r) => r.members),
    get<{ schedules: Schedule[] }>(`${base}/schedules`).then((r) => r.schedules),
    get<{ teams: Team[] }>(`${base}/teams`).then((r) => r.teams),
  ]).then(([members, schedules, teams]) => ({ members, schedules, teams }));
}

/** The name of a target alone ("Primary"); an unknown id says what it was. */
function plainName(t: EscalationTarget, dir: Directory | undefined): string {
  if (t.type === 'nearest') return nearestName(t, dir);
  const name = t.type === 'user' ? dir?.members.find((m) => m.user_id === t.id)?.name : t.type === 'schedule' ? dir?.schedules.find((x) => x.id === t.id)?.name : dir?.teams.find((x) => x.id === t.id)?.name;
  if (name) return name;
  if (!dir) return `${TYPE_WORD[t.type]} ${t.id}`;
  return t.type === 'user' ? `person ${t.id} (no longer a member)` : `${t.type} ${t.id} (deleted)`;
}

/** "the 2 nearest on duty of Water team, within 5000 m": the nearest responders by live position (docs/paging.md). */
function nearestName(t: EscalationTarget, dir: Directory | undefined): string {
  const among =
    t.schedule_id !== undefined
      ? ` on call in ${dir?.schedules.find((x) => x.id === t.schedule_id)?.name ?? `schedule ${t.schedule_id}`}`
      : t.team_id !== undefined
        ? ` of ${dir?.teams.find((x) => x.id === t.team_id)?.name ?? `team ${t.team_id}`}`
        : '';
  return `the ${t.count ?? 1} nearest with a live beacon${among}${t.within_m !== undefined ? `, within ${t.within_m} m` : ''}`;
}

/** "Primary (schedule)", "Ann Example", "Water team (team)". */
export function targetName(t: EscalationTarget, dir: Directory | undefined): string {
  const name = plainName(t, dir);
  return t.type === 'user' || t.type === 'nearest' || !dir?.[t.type === 'schedule' ? 'schedules' : 'teams'].some((x) => x.id === t.id) ? name : `${name} (${t.type})`;
}

const minutes = (m: number) => (m % 60 === 0 && m >= 60 ? `${m / 60} h` : `${m} min`);

/** What happens after a level, in words. */
function afterLevel(level: EscalationLevel, i: number, count: number, repeat: number): string {
  const wait = `after ${minutes(level.delay_minutes)} without acknowledgement`;
  if (i < count - 1) return `${wait}, level ${i + 2}`;
  return repeat > 0 ? `${wait}, start again from level 1 (${repeat === 1 ? 'once' : `${repeat} times`})` : `${wait}, the escalation is exhausted`;
}

export function PoliciesView({ slug }: { slug: string }) {
  const { orgs } = useSession();
  const org = orgs.find((o) => o.slug === slug);
  const base = `/v1/orgs/${encodeURIComponent(slug)}`;
  const manage = !!org && (org.role === 'owner' || org.role === 'admin') && !org.locked;
  const list = useAsync(() => get<{ escalation_policies: EscalationPolicy[] }>(`${base}/escalation-policies`).then((r) => r.escalation_policies), [slug]);
  const dir = useAsync(() => loadDirectory(slug), [slug]);
  // Where each policy is used: the org default (dispatch settings) and, for admins, the integrations.
  const uses = useAsync(
    () =>
      Promise.all([
        get<DispatchSettings>(`${base}/dispatch`).then((d) => d.default_escalation_policy_id),
        manage && org ? get<{ integrations: Integration[] }>(`/v1/integrations?org_id=${org.id}`).then((r) => r.integrations) : Promise.resolve([] as Integration[]),
      ]).then(([defaultId, integrations]) => ({ defaultId, integrations })),
    [slug],
  );
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  if (!org) return <Empty title="Organization not found"><a href="/app/orgs">Back to organizations</a></Empty>;

  const remove = async (p: EscalationPolicy) => {
    if (!confirm(`Delete the escalation policy "${p.name}"? Incidents already escalating keep their copy.`)) return;
    setError(null);
    setNotice(null);
    try {
      await del(`${base}/escalation-policies/${p.id}`);
      list.setData((l) => l?.filter((x) => x.id !== p.id));
      setNotice(`“${p.name}” was deleted.`);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="view">
      <a class="back" href={`/app/orgs/${encodeURIComponent(slug)}`}>
        ← {org.name}
      </a>
      <PageHeader title="Escalation policies" sub={`Who is paged for ${org.name}'s incidents, level after level, until someone acknowledges.`}>
        {manage ? (
          <a class="button" href={`/app/orgs/${encodeURIComponent(slug)}/escalation-policies/new`} data-testid="new-policy">
            New policy
          </a>
        ) : null}
      </PageHeader>
      <p class="muted">
        Each level pages its people, whoever is on call in its schedules, and its teams' active members, each by their own notification rules. Urgent and high
        incidents move to the next level when nobody acknowledges in time; normal and low ones page level 1 only. An integration chooses its policy; the org's
        default (on the organization's page) serves field alerts, email and API incidents.
      </p>
      <ErrorAlert error={list.error ?? dir.error ?? error} />
      {notice ? (
        <p class="saved-note" role="status" data-testid="policy-notice">
          {notice}
        </p>
      ) : null}
      {list.loading && !list.data ? <Loading label="Loading escalation policies" /> : null}
      {list.data && list.data.length === 0 ? (
        <Empty title="No escalation policies yet">
          {manage ? 'Create one, then choose it for an integration or as the org default.' : "An admin of this organization can create one. Until then incidents alert the org's admins."}
        </Empty>
      ) : null}
      <ul class="cards policy-list" data-testid="policy-list">
        {list.data?.map((p) => {
          const usedBy = uses.data?.integrations.filter((i) => i.escalation_policy_id === p.id) ?? [];
          return (
            <li key={p.id} class="card stack" data-testid="policy-row" data-id={p.id}>
              <div class="row">
                <h2>{p.name}</h2>
                {uses.data?.defaultId === p.id ? <span class="badge brand">Org default</span> : null}
              </div>
              <ol class="levels">
                {p.levels.map((l, i) => (
                  <li key={i} data-testid="policy-level">
                    <strong>Level {i + 1}</strong>
                    {i === 0 ? ' (at once)' : ''}: {l.targets.map((t) => targetName(t, dir.data)).join(', ')}
                    <br />
                    <small class="muted">Then, {afterLevel(l, i, p.levels.length, p.repeat)}.</small>
                  </li>
                ))}
              </ol>
              {usedBy.length > 0 ? <p class="small-print">Used by {usedBy.map((i) => `“${i.name}”`).join(', ')}</p> : null}
              {manage ? (
                <div class="row">
                  <a class="button secondary small" href={`/app/orgs/${encodeURIComponent(slug)}/escalation-policies/${p.id}`} aria-label={`Edit ${p.name}`} data-testid="policy-edit">
                    Edit
                  </a>
                  <button type="button" class="secondary small danger-text" aria-label={`Delete ${p.name}`} data-testid="policy-delete" onClick={() => void remove(p)}>
                    Delete
                  </button>
                </div>
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/**
 * A `nearest` target as the form holds it: numbers as typed (an empty or out-of-range one comes back
 * as the API's 422 beside its input) and whom it is limited to as one select value (`schedule:3`).
 */
interface NearestForm {
  type: 'nearest';
  count: string;
  within: string;
  among: string;
}
type FormTarget = { type: Exclude<TargetType, 'nearest'>; id: number } | NearestForm;
interface LevelForm {
  delay: string;
  targets: FormTarget[];
}
interface Form {
  name: string;
  repeat: string;
  levels: LevelForm[];
}

const newLevel = (): LevelForm => ({ delay: '5', targets: [] });
const toForm = (t: EscalationTarget): FormTarget =>
  t.type === 'nearest'
    ? { type: 'nearest', count: String(t.count ?? 1), within: t.within_m === undefined ? '' : String(t.within_m), among: t.schedule_id !== undefined ? `schedule:${t.schedule_id}` : t.team_id !== undefined ? `team:${t.team_id}` : '' }
    : { type: t.type, id: t.id ?? 0 };
/** Numbers as typed: an empty or out-of-range one is the API's 422, shown beside its input. */
const num = (v: string) => (v.trim() === '' ? (v as unknown as number) : Number(v));
function toTarget(t: FormTarget): EscalationTarget {
  if (t.type !== 'nearest') return t;
  const [kind, id] = t.among.split(':');
  return {
    type: 'nearest',
    count: num(t.count),
    ...(t.within.trim() !== '' ? { within_m: num(t.within) } : {}),
    ...(kind === 'schedule' ? { schedule_id: Number(id) } : kind === 'team' ? { team_id: Number(id) } : {}),
  };
}
const fromPolicy = (p: EscalationPolicy): Form => ({ name: p.name, repeat: String(p.repeat), levels: p.levels.map((l) => ({ delay: String(l.delay_minutes), targets: l.targets.map(toForm) })) });

/** The picker: one select of the org's people, schedules and teams (value `type:id`), then Add. */
function TargetPicker({ i, dir, taken, onAdd }: { i: number; dir: Directory | undefined; taken: FormTarget[]; onAdd: (t: FormTarget) => void }) {
  const [pick, setPick] = useState('');
  const free = (type: TargetType, id: number) => !taken.some((t) => t.type === type && t.type !== 'nearest' && t.id === id);
  const add = () => {
    if (pick === 'nearest') onAdd({ type: 'nearest', count: '1', within: '', among: '' });
    else {
      const [type, id] = pick.split(':');
      if (!type || !id) return;
      onAdd({ type: type as Exclude<TargetType, 'nearest'>, id: Number(id) });
    }
    setPick('');
  };
  return (
    <div class="row tight">
      <label class="visually-hidden" for={`level-${i}-add`}>
        Add whom level {i + 1} pages
      </label>
      <select id={`level-${i}-add`} class="compact grow" value={pick} disabled={!dir} onChange={(e) => setPick(e.currentTarget.value)} data-testid="target-picker">
        <option value="">Add a schedule, person, team or the nearest…</option>
        <optgroup label="By position: the nearest with a live beacon when the level fires">
          <option value="nearest">Nearest responders</option>
        </optgroup>
        <optgroup label="Schedules: whoever is on call when the level fires">
          {dir?.schedules
            .filter((s) => free('schedule', s.id))
            .map((s) => (
              <option key={`s${s.id}`} value={`schedule:${s.id}`}>
                {s.name}
              </option>
            ))}
        </optgroup>
        <optgroup label="People">
          {dir?.members
            .filter((m) => free('user', m.user_id))
            .map((m) => (
              <option key={`u${m.user_id}`} value={`user:${m.user_id}`}>
                {m.name}
              </option>
            ))}
        </optgroup>
        <optgroup label="Teams: their active members">
          {dir?.teams
            .filter((t) => free('team', t.id))
            .map((t) => (
              <option key={`t${t.id}`} value={`team:${t.id}`}>
                {t.name}
              </option>
            ))}
        </optgroup>
      </select>
      <button type="button" class="secondary small" disabled={!pick} onClick={add} data-testid="target-add">
        Add
      </button>
    </div>
  );
}

/**
 * A `nearest` target (issue #38): how many of the nearest people with a live beacon, within how many
 * metres (optional), and among whom (anyone of the org, whoever is on call in a schedule, or a
 * team's active members). Each input shows its own 422 (`levels.N.targets.J.count`, ...).
 */
function NearestFields({ t, at, label, dir, error, set, remove }: { t: NearestForm; at: string; label: string; dir: Directory | undefined; error: unknown; set: (t: NearestForm) => void; remove: () => void }) {
  const id = at.replace(/\./g, '-');
  return (
    <fieldset class="nearest stack" data-testid="nearest-target">
      <legend>
        <span class="badge">{TYPE_WORD.nearest}</span> Nearest responders with a live beacon
      </legend>
      <div class="grid-3">
        <div class="field">
          <label for={`${id}-count`}>How many</label>
          <input id={`${id}-count`} name={`${at}.count`} data-field={`${at}.count`} type="number" inputMode="numeric" min={1} max={5} class="narrow" value={t.count} onInput={(e) => set({ ...t, count: e.currentTarget.value })} data-testid="nearest-count" />
          <small>1 to 5.</small>
          <FieldError error={error} name={`${at}.count`} />
        </div>
        <div class="field">
          <label for={`${id}-within_m`}>Within (metres, optional)</label>
          <input id={`${id}-within_m`} name={`${at}.within_m`} data-field={`${at}.within_m`} type="number" inputMode="numeric" min={10} max={50000} class="narrow" value={t.within} placeholder="Any distance" onInput={(e) => set({ ...t, within: e.currentTarget.value })} data-testid="nearest-within" />
          <small>10 to 50000.</small>
          <FieldError error={error} name={`${at}.within_m`} />
        </div>
        <div class="field">
          <label for={`${id}-among`}>Among</label>
          <select id={`${id}-among`} name={`${at}.among`} data-field={`${at}.${t.among.startsWith('team') ? 'team_id' : 'schedule_id'}`} value={t.among} onChange={(e) => set({ ...t, among: e.currentTarget.value })} data-testid="nearest-among">
            <option value="">Anyone in the organization</option>
            {dir && dir.schedules.length > 0 ? (
              <optgroup label="Whoever is on call in">
                {dir.schedules.map((s) => (
                  <option key={`s${s.id}`} value={`schedule:${s.id}`}>
                    {s.name}
                  </option>
                ))}
              </optgroup>
            ) : null}
            {dir && dir.teams.length > 0 ? (
              <optgroup label="The active members of">
                {dir.teams.map((x) => (
                  <option key={`t${x.id}`} value={`team:${x.id}`}>
                    {x.name}
                  </option>
                ))}
              </optgroup>
            ) : null}
          </select>
          <FieldError error={error} name={`${at}.schedule_id`} />
          <FieldError error={error} name={`${at}.team_id`} />
        </div>
      </div>
      <small class="muted">Paged: {nearestName({ ...toTarget(t), count: Number(t.count) || 1 }, dir)}, by their distance to the incident when the level fires (an incident without a position pages nobody here).</small>
      <FieldError error={error} name={`${at}.id`} />
      <div>
        <button type="button" class="ghost small danger-text" aria-label={`Remove the nearest responders from ${label}`} onClick={remove}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}

function LevelEditor({ l, i, count, repeat, dir, error, set, move, remove }: { l: LevelForm; i: number; count: number; repeat: number; dir: Directory | undefined; error: unknown; set: (l: LevelForm) => void; move: (d: -1 | 1) => void; remove: () => void }) {
  const f = `levels.${i}`;
  const last = i === count - 1;
  return (
    <fieldset class="card stack level" data-testid="level-editor">
      <legend>
        Level {i + 1}
        {i === 0 ? ' (fires at once)' : ''}
      </legend>
      <div class="field">
        <span class="label">Pages</span>
        {l.targets.length === 0 ? <p class="muted small">Nobody yet: add at least one schedule, person, team or the nearest responders.</p> : null}
        <ul class="targets" data-testid="level-targets">
          {l.targets.map((t, j) => {
            const remove = () => set({ ...l, targets: l.targets.filter((_, k) => k !== j) });
            if (t.type === 'nearest') {
              return (
                <li key={`nearest-${j}`} data-testid="level-target">
                  <NearestFields t={t} at={`${f}.targets.${j}`} label={`level ${i + 1}`} dir={dir} error={error} set={(x) => set({ ...l, targets: l.targets.map((y, k) => (k === j ? x : y)) })} remove={remove} />
                </li>
              );
            }
            const name = plainName(toTarget(t), dir);
            return (
              <li key={`${t.type}-${t.id}`} data-testid="level-target">
                <span class="badge">{TYPE_WORD[t.type]}</span> {name}
                <button type="button" class="ghost small" aria-label={`Remove ${name} from level ${i + 1}`} onClick={remove}>
                  ✕
                </button>
                <FieldError error={error} name={`${f}.targets.${j}.id`} />
              </li>
            );
          })}
        </ul>
        <TargetPicker i={i} dir={dir} taken={l.targets} onAdd={(t) => set({ ...l, targets: [...l.targets, t] })} />
        <FieldError error={error} name={`${f}.targets`} />
      </div>
      <div class="field">
        <label for={`level-${i}-delay`}>{last ? (repeat > 0 ? 'Minutes without acknowledgement before starting again from level 1' : 'Minutes without acknowledgement before the escalation is exhausted') : `Minutes without acknowledgement before level ${i + 2}`}</label>
        <input id={`level-${i}-delay`} name={`${f}.delay_minutes`} data-field={`${f}.delay_minutes`} type="number" inputMode="numeric" min={1} max={1440} value={l.delay} onInput={(e) => set({ ...l, delay: e.currentTarget.value })} class="narrow" data-testid="level-delay" />
        <small>1 to 1440.</small>
        <FieldError error={error} name={`${f}.delay_minutes`} />
      </div>
      <div class="row">
        <button type="button" class="secondary small" disabled={i === 0} onClick={() => move(-1)}>
          Move up
        </button>
        <button type="button" class="secondary small" disabled={last} onClick={() => move(1)}>
          Move down
        </button>
        <button type="button" class="ghost small danger-text" disabled={count === 1} onClick={remove} data-testid="level-remove">
          Remove level
        </button>
      </div>
    </fieldset>
  );
}

export function PolicyEditor({ slug, id }: { slug: string; id: number | null }) {
  const base = `/v1/orgs/${encodeURIComponent(slug)}/escalation-policies`;
  const listPath = `/app/orgs/${encodeURIComponent(slug)}/escalation-policies`;
  const existing = useAsync(() => (id === null ? Promise.resolve(null) : get<EscalationPolicy>(`${base}/${id}`)), [id]);
  const dir = useAsync(() => loadDirectory(slug), [slug]);
  const [form, setForm] = useState<Form | null>(id === null ? { name: '', repeat: '0', levels: [newLevel()] } : null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (existing.data) setForm(fromPolicy(existing.data));
  }, [existing.data]);
  if (existing.error instanceof ApiError && existing.error.status === 404) return <Empty title="Escalation policy not found"><a href={listPath}>Back to escalation policies</a></Empty>;
  if (existing.error) return <ErrorAlert error={existing.error} />;
  if (!form) return <Loading label="Loading escalation policy" />;
  const set = (p: Partial<Form>) => setForm({ ...form, ...p });
  const setLevel = (i: number, l: LevelForm | null) => set({ levels: l === null ? form.levels.filter((_, j) => j !== i) : form.levels.map((x, j) => (j === i ? l : x)) });
  const move = (i: number, d: -1 | 1) => {
    const levels = [...form.levels];
    [levels[i], levels[i + d]] = [levels[i + d]!, levels[i]!];
    set({ levels });
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body = { name: form.name, repeat: Number(form.repeat), levels: form.levels.map((l) => ({ delay_minutes: num(l.delay), targets: l.targets.map(toTarget) })) };
    try {
      if (id === null) await post<EscalationPolicy>(base, body);
      else await patch<EscalationPolicy>(`${base}/${id}`, body);
      navigate(listPath);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  const repeat = Number(form.repeat);
  return (
    <section class="view">
      <a class="back" href={listPath}>
        ← Escalation policies
      </a>
      <header class="page-header">
        <h1>{id === null ? 'New escalation policy' : `Edit ${existing.data?.name ?? form.name}`}</h1>
      </header>
      <form class="stack" onSubmit={(e) => void submit(e)} data-testid="policy-form" noValidate>
        <ErrorAlert error={error ?? dir.error} />
        <fieldset class="card stack">
          <legend>Policy</legend>
          <div class="grid-2">
            <div class="field">
              <label for="policy-name">Name</label>
              <input id="policy-name" name="name" maxLength={100} placeholder="Water network" value={form.name} onInput={(e) => set({ name: e.currentTarget.value })} data-testid="policy-name" />
              <FieldError error={error} name="name" />
            </div>
            <div class="field">
              <label for="policy-repeat">After the last level</label>
              <select id="policy-repeat" name="repeat" value={form.repeat} onChange={(e) => set({ repeat: e.currentTarget.value })} data-testid="policy-repeat">
                <option value="0">Stop: the escalation is exhausted</option>
                {[1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => (
                  <option key={n} value={String(n)}>
                    Start again from level 1, {n === 1 ? 'once' : `${n} times`}
                  </option>
                ))}
              </select>
              <FieldError error={error} name="repeat" />
            </div>
          </div>
          {id !== null ? <small class="muted">Changes apply to incidents opened from now on; an escalation already running keeps the policy it started with.</small> : null}
        </fieldset>
        {form.levels.map((l, i) => (
          <LevelEditor key={i} l={l} i={i} count={form.levels.length} repeat={repeat} dir={dir.data} error={error} set={(x) => setLevel(i, x)} move={(d) => move(i, d)} remove={() => setLevel(i, null)} />
        ))}
        <FieldError error={error} name="levels" />
        <div class="row sticky-actions">
          <button type="button" class="secondary" disabled={form.levels.length >= 20} onClick={() => set({ levels: [...form.levels, newLevel()] })} data-testid="add-level">
            + Add level
          </button>
          <span class="spacer" />
          <button type="submit" disabled={busy} data-testid="save-policy">
            {busy ? 'Saving…' : id === null ? 'Create policy' : 'Save changes'}
          </button>
        </div>
      </form>
    </section>
  );
}
