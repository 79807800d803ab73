import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { randomToken, sha256 } from '../../lib/crypto.js';
import { forbidden, notFound } from '../../lib/errors.js';
import * as keys from './api-keys.repository.js';
import type { ApiKeyRow } from './api-keys.repository.js';

/**
 * A test-mode credential sees and manages only test keys, so a leaked sk_test_ key can never mint
 * or revoke a live one. A session cookie and a live key manage both.
 */
const visibleModes = (actor: Actor): readonly Mode[] => (actor.mode === 'test' ? ['test'] : ['live', 'test']);

const toApiKey = (k: ApiKeyRow) => ({
  id: k.id,
  name: k.name,
  mode: k.mode,
  livemode: k.mode === 'live',
  redacted: `sk_${k.mode}_...${k.last4}`,
  created_at: k.created_at,
});

export async function createApiKey(ctx: AppContext, actor: Actor, input: { name: string; mode: Mode }) {
  if (!visibleModes(actor).includes(input.mode)) throw forbidden();
  const secret = `sk_${input.mode}_${randomToken(32)}`;
  const row = await keys.insertApiKey(ctx.db, {
    user_id: actor.userId,
    name: input.name.trim(),
    mode: input.mode,
    key_hash: sha256(secret),
    last4: secret.slice(-4),
    created_at: iso(ctx.clock.now()),
  });
  return { ...toApiKey(row), key: secret };
}

export async function listApiKeys(ctx: AppContext, actor: Actor) {
  const rows = await keys.listActiveKeys(ctx.db, actor.userId, visibleModes(actor));
  return { api_keys: rows.map(toApiKey) };
}

export async function revokeApiKey(ctx: AppContext, actor: Actor, id: number) {
  if (!(await keys.revokeKey(ctx.db, actor.userId, id, visibleModes(actor), iso(ctx.clock.now())))) throw notFound();
  ctx.events.endAccess({ keyId: id }); // its open streams close, on every instance
  return { id, revoked: true };
}
