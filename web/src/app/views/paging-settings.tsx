// Settings, "How you are paged" (docs/paging.md): the personal notification rules of each urgency
// (channel and delay after the page) and the phone number SMS and calls go to, proven by a code.
import { useEffect, useState } from 'preact/hooks';
import { api, get, patch, post } from '../../lib/api';
import { useSession } from '../session';
import type { Me, NotificationRule, NotificationRules } from '../types';
import { ErrorAlert, FieldError, Loading, useAsync } from '../ui';

type Channel = NotificationRule['channel'];
type Urgency = keyof NotificationRules;

const CHANNELS: [Channel, string][] = [
  ['push', 'Push'],
  ['email', 'Email'],
  ['sms', 'SMS'],
  ['voice', 'Call'],
];
const CHANNEL_WORD: Record<Channel, string> = { push: 'push', email: 'email', sms: 'SMS', voice: 'a phone call' };
const URGENCIES: [Urgency, string, string][] = [
  ['high', 'Urgent and high incidents', 'rules-high'],
  ['low', 'Normal and low incidents', 'rules-low'],
];
const MAX_RULES = 10;

interface RuleForm {
  channel: Channel;
  delay: string;
}
type Form = Record<Urgency, RuleForm[]>;

const toForm = (r: NotificationRules): Form => ({ high: r.high.map((x) => ({ channel: x.channel, delay: String(x.delay_minutes) })), low: r.low.map((x) => ({ channel: x.channel, delay: String(x.delay_minutes) })) });

/** "push at once, SMS after 2 min" (in delay order, as they are sent); "nothing" for no rules. */
export function rulesInWords(rules: readonly NotificationRule[]): string {
  if (rules.length === 0) return 'nothing: you are not notified';
  return [...rules]
    .sort((a, b) => a.delay_minutes - b.delay_minutes)
    .map((r) => `${CHANNEL_WORD[r.channel]} ${r.delay_minutes === 0 ? 'at once' : `after ${r.delay_minutes} min`}`)
    .join(', ');
}

const usesPhone = (form: Form) => [...form.high, ...form.low].some((r) => r.channel === 'sms' || r.channel === 'voice');

export function PagingSettings() {
  const { me } = useSession();
  const [phone, setPhone] = useState<{ number: string | null; verified: boolean }>({ number: me.phone, verified: me.phone_verified });
  const rules = useAsync(() => get<NotificationRules>('/v1/auth/me/notification-rules'), []);
  const [form, setForm] = useState<Form | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (rules.data) setForm(toForm(rules.data));
  }, [rules.data]);

  const setRule = (u: Urgency, i: number, r: RuleForm | null) => {
    if (!form) return;
    setSaved(null);
    setForm({ ...form, [u]: r === null ? form[u].filter((_, j) => j !== i) : form[u].map((x, j) => (j === i ? r : x)) });
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!form) return;
    setBusy(true);
    setError(null);
    setSaved(null);
    // Delays as typed: an empty or out-of-range one is the API's 422, shown beside its input.
    const body = (u: Urgency) => form[u].map((r) => ({ channel: r.channel, delay_minutes: r.delay.trim() === '' ? r.delay : Number(r.delay) }));
    try {
      const r = await api<NotificationRules>('PUT', '/v1/auth/me/notification-rules', { high: body('high'), low: body('low') });
      rules.setData(() => r);
      setForm(toForm(r));
      setSaved(`Saved. Urgent and high: ${rulesInWords(r.high)}. Normal and low: ${rulesInWords(r.low)}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="card stack span-2" data-testid="paging-settings">
      <h2>How you are paged</h2>
      <p class="muted">
        When an escalation policy pages you, each rule of the incident's urgency is sent at its delay after the page, until you or someone else acknowledges
        it: then every rule not yet sent is cancelled.
      </p>
      <PhoneCard
        phone={phone}
        onChange={(p) => {
          setPhone(p);
          Object.assign(me, { phone: p.number, phone_verified: p.verified } satisfies Partial<Me>);
        }}
      />
      {form && usesPhone(form) && !phone.verified ? (
        <p class="alert warn" role="note" data-testid="rules-phone-warning">
          {phone.number
            ? `Your phone number ${phone.number} is not confirmed yet: SMS and phone-call rules are skipped (recorded as “phone not verified”) until you enter the code it received.`
            : 'You have no phone number: SMS and phone-call rules are skipped (recorded as “phone not verified”) until you add one and confirm it.'}
        </p>
      ) : null}
      <form class="stack" onSubmit={(e) => void submit(e)} data-testid="rules-form" noValidate>
        <ErrorAlert error={rules.error ?? error} />
        {saved ? (
          <p class="saved-note" role="status" data-testid="rules-saved">
            {saved}
          </p>
        ) : null}
        {!form && !rules.error ? <Loading label="Loading your notification rules" /> : null}
        {form ? (
          <div class="grid-2">
            {URGENCIES.map(([u, label, testid]) => (
              <fieldset class="stack rules" key={u} data-testid={testid}>
                <legend>{label}</legend>
                {form[u].length === 0 ? <p class="muted small">No rules: you are not notified of these.</p> : null}
                <ol class="rule-list">
                  {form[u].map((r, i) => (
                    <li key={i} class="rule" data-testid="rule">
                      <label class="visually-hidden" for={`rule-${u}-${i}-channel`}>
                        {label}, rule {i + 1}: channel
                      </label>
                      <select id={`rule-${u}-${i}-channel`} class="compact" value={r.channel} onChange={(e) => setRule(u, i, { ...r, channel: e.currentTarget.value as Channel })} data-testid="rule-channel">
                        {CHANNELS.map(([c, word]) => (
                          <option key={c} value={c}>
                            {word}
                          </option>
                        ))}
                      </select>
                      <label for={`rule-${u}-${i}-delay`} class="rule-after">
                        after
                      </label>
                      <input
                        id={`rule-${u}-${i}-delay`}
                        class="rule-delay"
                        type="number"
                        inputMode="numeric"
                        min={0}
                        max={120}
                        name={`${u}.${i}.delay_minutes`}
                        data-field={`${u}.${i}.delay_minutes`}
                        value={r.delay}
                        onInput={(e) => setRule(u, i, { ...r, delay: e.currentTarget.value })}
                        data-testid="rule-delay"
                      />
                      <span aria-hidden="true">min</span>
                      <button type="button" class="ghost small" aria-label={`Remove ${label.toLowerCase()} rule ${i + 1}`} onClick={() => setRule(u, i, null)} data-testid="rule-remove">
                        ✕
                      </button>
                      <FieldError error={error} name={`${u}.${i}.delay_minutes`} />
                      <FieldError error={error} name={`${u}.${i}.channel`} />
                    </li>
                  ))}
                </ol>
                <FieldError error={error} name={u} />
                <div>
                  <button
                    type="button"
                    class="ghost small"
                    disabled={form[u].length >= MAX_RULES}
                    onClick={() => setForm({ ...form, [u]: [...form[u], { channel: 'push', delay: form[u].length === 0 ? '0' : '5' }] })}
                    data-testid="rule-add"
                  >
                    + Add a rule
                  </button>
                </div>
              </fieldset>
            ))}
          </div>
        ) : null}
        <small class="muted">0 is at once; at most 120 minutes and {MAX_RULES} rules for each urgency.</small>
        <div>
          <button type="submit" disabled={busy || !form} data-testid="rules-save">
            {busy ? 'Saving…' : 'Save notification rules'}
          </button>
        </div>
      </form>
    </div>
  );
}

/** The phone SMS and calls go to: a new number gets a six-digit code by SMS, entered here to prove it. */
function PhoneCard({ phone, onChange }: { phone: { number: string | null; verified: boolean }; onChange: (p: { number: string | null; verified: boolean }) => void }) {
  const [number, setNumber] = useState(phone.number ?? '');
  const [code, setCode] = useState('');
  const [error, setError] = useState<{ step: 'send' | 'verify'; err: unknown } | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (step: 'send' | 'verify', fn: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      setNote(await fn());
    } catch (err) {
      setError({ step, err });
    } finally {
      setBusy(false);
    }
  };
  const send = () =>
    run('send', async () => {
      const value = number.trim() ? number.trim() : null;
      const r = await patch<Me>('/v1/auth/me', { phone: value });
      onChange({ number: r.phone, verified: r.phone_verified });
      setCode('');
      return r.phone === null ? 'Phone number removed.' : r.phone_verified ? 'Phone number saved.' : `A six-digit code is on its way to ${r.phone} by SMS. Enter it below.`;
    });
  const verify = () =>
    run('verify', async () => {
      const r = await post<{ phone: string; phone_verified: boolean }>('/v1/auth/me/phone/verify', { code: code.trim() });
      onChange({ number: r.phone, verified: r.phone_verified });
      setCode('');
      return `${r.phone} is confirmed: SMS and phone calls will reach you there.`;
    });
  const sendError = error?.step === 'send' ? error.err : null;
  const verifyError = error?.step === 'verify' ? error.err : null;
  const changed = (number.trim() || null) !== phone.number;
  return (
    <div class="stack phone-card" data-testid="phone-card">
      <h3>Phone for SMS and calls</h3>
      {note ? (
        <p class="saved-note" role="status" data-testid="phone-note">
          {note}
        </p>
      ) : null}
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
        noValidate
        data-testid="phone-form"
      >
        <ErrorAlert error={sendError} />
        <div class="row nowrap-lg">
          <div class="field grow">
            <label for="p-phone">Phone number</label>
            <input id="p-phone" name="phone" type="tel" autoComplete="tel" placeholder="+4915112345678" value={number} onInput={(e) => setNumber(e.currentTarget.value)} data-testid="phone-input" />
            <FieldError error={sendError} name="phone" />
            <small>
              {phone.number ? (
                <>
                  {phone.number}{' '}
                  {phone.verified ? (
                    <span class="badge ok" data-testid="phone-state" data-verified="true">
                      Confirmed
                    </span>
                  ) : (
                    <span class="badge warn" data-testid="phone-state" data-verified="false">
                      Not confirmed
                    </span>
                  )}
                </>
              ) : (
                'International format, with the country code.'
              )}
            </small>
          </div>
          <button type="submit" class="align-end secondary" disabled={busy || (!changed && (phone.verified || !phone.number))} data-testid="phone-send">
            {!changed && phone.number && !phone.verified ? 'Send a new code' : number.trim() || !phone.number ? 'Send code' : 'Remove number'}
          </button>
        </div>
      </form>
      {phone.number && !phone.verified ? (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void verify();
          }}
          noValidate
          data-testid="phone-verify-form"
        >
          <ErrorAlert error={verifyError} />
          <div class="row nowrap-lg">
            <div class="field grow">
              <label for="p-code">Code from the SMS</label>
              <input id="p-code" name="code" inputMode="numeric" autoComplete="one-time-code" maxLength={6} placeholder="123456" value={code} onInput={(e) => setCode(e.currentTarget.value)} data-testid="phone-code" />
              <FieldError error={verifyError} name="code" />
            </div>
            <button type="submit" class="align-end" disabled={busy || code.trim().length === 0} data-testid="phone-verify">
              Confirm number
            </button>
          </div>
        </form>
      ) : null}
    </div>
  );
}
