/**
 * "Access changed" notices: published where a credential or a membership ends (after the change
 * commits), carried to every instance by the event bus, and acted on by each instance's hub, which
 * closes the streams the notice covers, and by each instance's credential cache, which drops the
 * entries it covers (modules/auth/credential-cache.ts).
 *
 * - `{keyId}`: an API key was revoked.
 * - `{sessionId}`: a session ended (logout, deletion); the id is the stored hash of the cookie.
 * - `{userId}`: everything of a user ended (the user was deleted).
 * - `{userId, orgId}`: a user's membership of an org ended or its role changed; also when one
 *   begins, so that credential caches (modules/auth/credential-cache.ts) read it again (it closes
 *   no stream: none includes an org its holder was not a member of).
 * - `{orgId}`: the org was deleted (every member's view of it ends).
 * - `{deviceId}`: a tracker device's token was revoked or the device changed (devices cache
 *   them, modules/devices/device-cache.ts); it covers no stream.
 * - `{userRow}`: the row of that user changed (name, phone, time zone, plan, address proven or
 *   withdrawn, password, feed version): credential caches read it again (issue #19). It ends no
 *   access and covers no stream; the user's plan also decides the lock of the orgs they own.
 * - `{subscriptionsOf}`: the incident subscriptions of that org changed (created, changed, deleted,
 *   disabled): each instance's subscription cache reads them again (modules/subscriptions). It ends
 *   no access and covers no stream.
 * - `{sitesOf}`: the sites (geofences) of that org changed (created, changed, deleted): each
 *   instance's site cache reads them again (modules/sites). It ends no access and covers no stream.
 * - `{integrationsOf}`: an integration of that org was created, changed or revoked: each instance's
 *   integration key cache reads the org's integrations again (modules/integrations/key-cache.ts), so
 *   a revoked key is refused everywhere. It covers no stream.
 * - `{dispatchOf}`: the dispatch settings of that org changed (acknowledgement timeouts, default
 *   escalation policy): each instance's cache of what a new incident takes from them reads them
 *   again (modules/incidents/defaults-cache.ts). It covers no stream.
 * - `{maintenanceOf}`: a maintenance window of that org was planned, changed or ended: each
 *   instance's window cache reads the org's windows again (modules/integrations/maintenance-cache.ts).
 *   It covers no stream.
 */
export interface AccessNotice {
  keyId?: number;
  sessionId?: string;
  userId?: number;
  orgId?: number;
  deviceId?: number;
  userRow?: number;
  subscriptionsOf?: number;
  sitesOf?: number;
  integrationsOf?: number;
  dispatchOf?: number;
  maintenanceOf?: number;
}

/** Who holds a stream: the user and the credential that opened it. */
export interface StreamHolder {
  userId: number;
  keyId?: number | undefined;
  sessionId?: string | undefined;
}

/** Whether a notice ends (part of) what a stream of `holder` over `orgIds` may receive. */
export function noticeCovers(notice: AccessNotice, holder: StreamHolder, orgIds: ReadonlySet<number>): boolean {
  if (notice.deviceId !== undefined || notice.userRow !== undefined || notice.subscriptionsOf !== undefined || notice.sitesOf !== undefined || notice.integrationsOf !== undefined || notice.dispatchOf !== undefined || notice.maintenanceOf !== undefined) return false;
  if (notice.keyId !== undefined) return notice.keyId === holder.keyId;
  if (notice.sessionId !== undefined) return notice.sessionId === holder.sessionId;
  if (notice.userId !== undefined && notice.userId !== holder.userId) return false;
  if (notice.orgId !== undefined) return orgIds.has(notice.orgId);
  return notice.userId !== undefined;
}

/** A notice from the wire (another instance), or undefined when it is not one. */
export function parseNotice(text: string): AccessNotice | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!raw || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  const notice: AccessNotice = {};
  if (Number.isSafeInteger(r.keyId)) notice.keyId = r.keyId as number;
  if (typeof r.sessionId === 'string') notice.sessionId = r.sessionId;
  if (Number.isSafeInteger(r.userId)) notice.userId = r.userId as number;
  if (Number.isSafeInteger(r.orgId)) notice.orgId = r.orgId as number;
  if (Number.isSafeInteger(r.deviceId)) notice.deviceId = r.deviceId as number;
  if (Number.isSafeInteger(r.userRow)) notice.userRow = r.userRow as number;
  if (Number.isSafeInteger(r.subscriptionsOf)) notice.subscriptionsOf = r.subscriptionsOf as number;
  if (Number.isSafeInteger(r.sitesOf)) notice.sitesOf = r.sitesOf as number;
  if (Number.isSafeInteger(r.integrationsOf)) notice.integrationsOf = r.integrationsOf as number;
  if (Number.isSafeInteger(r.dispatchOf)) notice.dispatchOf = r.dispatchOf as number;
  if (Number.isSafeInteger(r.maintenanceOf)) notice.maintenanceOf = r.maintenanceOf as number;
  return Object.keys(notice).length > 0 ? notice : undefined;
}
