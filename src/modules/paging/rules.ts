import { Type, type Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { StringEnum } from '../../lib/schemas.js';
import { findRules, saveRules } from './rules.repository.js';

export const CHANNELS = ['push', 'email', 'sms', 'voice'] as const;

const Rule = Type.Object(
  {
    channel: StringEnum(CHANNELS, { description: '`sms` and `voice` need a proven phone number (else recorded as skipped when due)' }),
    delay_minutes: Type.Integer({ minimum: 0, maximum: 120, description: 'minutes after the page' }),
  },
  { title: 'NotificationRule', additionalProperties: false },
);
const Rules = Type.Array(Rule, { maxItems: 10 });

export const NotificationRules = Type.Object(
  {
    high: Type.Array(Rule, { description: 'for urgent and high incidents' }),
    low: Type.Array(Rule, { description: 'for normal and low incidents' }),
  },
  {
    title: 'NotificationRules',
    description: 'How a person is reached when paged: each rule of the incident’s urgency is sent at page time + its delay, unless the incident is acknowledged or resolved first',
    examples: [{ high: [{ channel: 'push', delay_minutes: 0 }, { channel: 'email', delay_minutes: 0 }, { channel: 'sms', delay_minutes: 2 }, { channel: 'voice', delay_minutes: 5 }], low: [{ channel: 'push', delay_minutes: 0 }, { channel: 'email', delay_minutes: 0 }] }],
  },
);
export type NotificationRules = Static<typeof NotificationRules>;
export type RuleInput = Static<typeof Rule>;
export const PutNotificationRules = Type.Object({ high: Rules, low: Rules });

/** PagerDuty-like defaults: push and email at once, SMS at 2 minutes, a call at 5; low urgency push and email only. */
export const DEFAULT_RULES: NotificationRules = Object.freeze({
  high: [
    { channel: 'push', delay_minutes: 0 },
    { channel: 'email', delay_minutes: 0 },
    { channel: 'sms', delay_minutes: 2 },
    { channel: 'voice', delay_minutes: 5 },
  ],
  low: [
    { channel: 'push', delay_minutes: 0 },
    { channel: 'email', delay_minutes: 0 },
  ],
});

/** A person's rules, or the defaults when they never set theirs. */
export async function rulesOf(db: Kysely<DB>, userId: number): Promise<NotificationRules> {
  return (await findRules(db, userId)) ?? DEFAULT_RULES;
}

export async function getRules(ctx: AppContext, actor: Actor): Promise<NotificationRules> {
  return rulesOf(ctx.db, actor.userId);
}

/** Replaces both lists; each rule is kept in the order given (sent in delay order). */
export async function putRules(ctx: AppContext, actor: Actor, input: NotificationRules): Promise<NotificationRules> {
  const clean = (rules: readonly RuleInput[]) => rules.map((r) => ({ channel: r.channel, delay_minutes: r.delay_minutes }));
  const rules = { high: clean(input.high), low: clean(input.low) };
  await saveRules(ctx.db, actor.userId, rules, iso(ctx.clock.now()));
  return rules;
}
