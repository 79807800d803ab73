import { randomBytes, randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { flag } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { invalidField, notFound } from '../../lib/errors.js';
import { reachReason, refusePlainlyPrivate } from '../deliveries/index.js';
import { orgAccess } from '../orgs/index.js';
import { render, type Format } from './formats.js';
import { postTo } from './sender.js';
import * as repo from './subscriptions.repository.js';
import type { CreateSubscriptionBody, Subscription, TestResult, UpdateSubscriptionBody } from './subscriptions.schemas.js';

/** Admins and owners, every route: a subscription's URL is itself a credential (a Slack or Teams webhook URL). */
const ADMIN = { role: 'admin' } as const;
const WRITE = { role: 'admin', write: true } as const;

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export function toSubscription(r: repo.SubscriptionRow): Subscription {
  return {
    id: r.id,
    org_id: r.org_id,
    livemode: r.livemode === 1,
    url: r.url,
    format: r.format,
    events: r.events,
    secret: r.secret,
    description: r.description,
    enabled: r.disabled_at === null,
    disabled_at: r.disabled_at,
    disabled_reason: r.disabled_reason,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * The rules a schema cannot say: https unless the instance itself runs on plain http (development),
 * never a plainly private address (the connect-time guard checks every attempt), and a secret only
 * for `standard`, 24 to 64 bytes once decoded (what Standard Webhooks libraries accept).
 */
function checkTarget(ctx: AppContext, url: string | undefined, format: string, secret: string | undefined): void {
  if (url !== undefined) {
    if (!url.startsWith('https://') && ctx.config.publicUrl.startsWith('https:') && !ctx.config.allowPrivateWebhooks) throw invalidField('url', 'must be an https URL');
    refusePlainlyPrivate(ctx, 'url', url);
  }
  if (secret !== undefined) {
    if (format !== 'standard') throw invalidField('secret', 'is only for format standard (chat and teams receivers are not signed)');
    const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64').length;
    if (bytes < 24 || bytes > 64) throw invalidField('secret', 'must hold 24 to 64 bytes (base64 after whsec_)');
  }
}

/** Tells every instance's subscription cache to read the org's subscriptions again. */
const changed = (ctx: AppContext, orgId: number) => ctx.events.endAccess({ subscriptionsOf: orgId });

export async function createSubscription(ctx: AppContext, actor: Actor, orgSlug: string, input: CreateSubscriptionBody): Promise<Subscription> {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, WRITE);
  checkTarget(ctx, input.url, input.format, input.secret);
  const now = iso(ctx.clock.now());
  const row = await repo.insertSubscription(ctx.db, {
    org_id: org.id,
    livemode: flag(actor.mode === 'live'),
    url: input.url,
    format: input.format,
    events: input.events,
    secret: input.format === 'standard' ? (input.secret ?? newSecret()) : null,
    description: input.description?.trim() || null,
    disabled_at: null,
    disabled_reason: null,
    created_by: actor.userId,
    created_at: now,
    updated_at: now,
  });
  changed(ctx, org.id);
  return toSubscription(row);
}

export async function listSubscriptions(ctx: AppContext, actor: Actor, orgSlug: string) {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, ADMIN);
  return { data: (await repo.listSubscriptions(ctx.db, org.id, flag(actor.mode === 'live'))).map(toSubscription) };
}

/** A subscription of the org in the caller's mode; another org's, or the other mode's, is 404. */
async function subscriptionAccess(ctx: AppContext, actor: Actor, orgSlug: string, id: number, write: boolean) {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, write ? WRITE : ADMIN);
  const row = await repo.findSubscription(ctx.db, org.id, flag(actor.mode === 'live'), id);
  if (!row) throw notFound();
  return { org, row };
}

export async function getSubscription(ctx: AppContext, actor: Actor, orgSlug: string, id: number): Promise<Subscription> {
  return toSubscription((await subscriptionAccess(ctx, actor, orgSlug, id, false)).row);
}

/**
 * Changes what is given. A new format `standard` without a secret gets one; chat and teams drop
 * it. `enabled: true` turns on a subscription that a 410 turned off.
 */
export async function updateSubscription(ctx: AppContext, actor: Actor, orgSlug: string, id: number, input: UpdateSubscriptionBody): Promise<Subscription> {
  const { row } = await subscriptionAccess(ctx, actor, orgSlug, id, true);
  const format = input.format ?? row.format;
  checkTarget(ctx, input.url, format, input.secret);
  const now = iso(ctx.clock.now());
  const secret = format !== 'standard' ? null : (input.secret ?? row.secret ?? newSecret());
  const updated = await repo.updateSubscription(ctx.db, row.id, {
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.events !== undefined ? { events: input.events } : {}),
    ...(input.description !== undefined ? { description: input.description?.trim() || null } : {}),
    ...(input.enabled === true ? { disabled_at: null, disabled_reason: null } : {}),
    ...(input.enabled === false && row.disabled_at === null ? { disabled_at: now, disabled_reason: 'turned off by an admin' } : {}),
    format,
    secret,
    updated_at: now,
  });
  changed(ctx, row.org_id);
  return toSubscription(updated);
}

export async function deleteSubscription(ctx: AppContext, actor: Actor, orgSlug: string, id: number) {
  const { row } = await subscriptionAccess(ctx, actor, orgSlug, id, true);
  await repo.deleteSubscription(ctx.db, row.id);
  changed(ctx, row.org_id);
  return { id: row.id, deleted: true };
}

/**
 * "Send test": a `webhook.test` event in the subscription's format, POSTed now through the same
 * guard and signing as the deliveries, answering what the receiver answered. Sent once (no
 * retries) and not queued, so it is not in the delivery log; a turned-off subscription is tested too.
 */
export async function testSubscription(ctx: AppContext, actor: Actor, orgSlug: string, id: number): Promise<TestResult> {
  const { org, row } = await subscriptionAccess(ctx, actor, orgSlug, id, true);
  const body = render(row.format as Format, { type: 'webhook.test', at: iso(ctx.clock.now()), subscriptionId: row.id, orgName: org.name, events: row.events });
  try {
    const res = await postTo(ctx, row, body, `msg_${randomUUID().replace(/-/g, '')}`);
    const delivered = res.status >= 200 && res.status < 300;
    return { delivered, status_code: res.status, error: delivered ? null : `HTTP ${res.status}`, body: res.body.slice(0, 500) };
  } catch (err) {
    return { delivered: false, status_code: null, error: reachReason(ctx.log, err, 'the webhook receiver'), body: null };
  }
}

