// Beacon mode: one geolocation watch while active; the first beacon as soon as a position
// arrives, then one every 30 s with the latest position (positions in between are kept, not
// sent). Beacons are live-only: never queued offline, since a stale position is worthless.
// Stopping clears the watch, waits for a beacon in flight and sends DELETE /v1/signals/beacon.
import { api, messageOf } from '../lib/api';
import type { Fix, SignalBody } from './types';
import { WakeLock } from './wakelock';

export const BEACON_INTERVAL_MS = 30_000;
const ACTIVE_KEY = 'muster-field-beacon';

export interface BeaconState {
  active: boolean;
  since: number | null;
  lastSent: number | null;
  sent: number;
  fix: Fix | null;
  /** The last failure (send or position), cleared by the next success. */
  error: string | null;
  /** Location permission refused: the UI explains how to allow it. */
  denied: boolean;
  wakeLock: 'held' | 'released' | 'unsupported';
  stopping: boolean;
}

export function fixOf(pos: GeolocationPosition): Fix {
  return { lat: pos.coords.latitude, lng: pos.coords.longitude, accuracy: pos.coords.accuracy, at: pos.timestamp || Date.now() };
}

export class Beacon {
  private watchId: number | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private inflight: Promise<void> | null = null;
  private listeners = new Set<(s: BeaconState) => void>();
  private wake: WakeLock;
  /** Back online after a failed send: send at once, so "Beacon not sent" clears without waiting for the next tick. */
  private onOnline = () => {
    if (this.state.active && this.state.error?.startsWith('Beacon not sent')) void this.send();
  };
  state: BeaconState;

  constructor(
    private deviceId: string,
    private orgId: () => number | undefined,
    /** Every position seen, for the other signals to use. */
    private onFix: (fix: Fix) => void,
  ) {
    // A refused wake lock is not an error: the panel says the screen may sleep.
    this.wake = new WakeLock((held) => {
      this.set({ wakeLock: !this.wake.supported ? 'unsupported' : held ? 'held' : 'released' });
    });
    this.state = { active: false, since: null, lastSent: null, sent: 0, fix: null, error: null, denied: false, wakeLock: this.wake.supported ? 'released' : 'unsupported', stopping: false };
  }

  subscribe(fn: (s: BeaconState) => void): () => void {
    this.listeners.add(fn);
    fn(this.state);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<BeaconState>) {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn(this.state);
  }

  /** Was the beacon on when the page was last closed? (Then it resumes.) */
  static wasActive(): boolean {
    try {
      return localStorage.getItem(ACTIVE_KEY) === 'on';
    } catch {
      return false;
    }
  }

  start() {
    if (this.state.active) return;
    if (!('geolocation' in navigator)) {
      this.set({ error: 'This browser cannot share its location.' });
      return;
    }
    try {
      localStorage.setItem(ACTIVE_KEY, 'on');
    } catch {
      /* resuming after a reload is a convenience */
    }
    this.set({ active: true, since: Date.now(), lastSent: null, sent: 0, error: null, denied: false });
    this.watchId = navigator.geolocation.watchPosition(
      (pos) => {
        const fix = fixOf(pos);
        this.onFix(fix);
        const first = this.state.fix === null || this.state.sent === 0;
        this.set({ fix, denied: false, ...(this.state.error?.startsWith('Location') ? { error: null } : {}) });
        if (first && !this.inflight && this.timer === null) {
          void this.send();
          this.timer = setInterval(() => void this.send(), BEACON_INTERVAL_MS);
        }
      },
      (err) => {
        if (err.code === err.PERMISSION_DENIED) {
          this.set({ denied: true, error: 'Location permission is off for this site.' });
          void this.stop();
        } else this.set({ error: `Location unavailable: ${err.message || 'no fix yet'}` });
      },
      { enableHighAccuracy: true, maximumAge: 10_000, timeout: 60_000 },
    );
    window.addEventListener('online', this.onOnline);
    void this.wake.enable();
  }

  /** Sends the latest position now (the timer calls this every 30 s). */
  private send(): Promise<void> {
    const fix = this.state.fix;
    if (!fix || this.inflight || !this.state.active) return this.inflight ?? Promise.resolve();
    const body: SignalBody = { type: 'beacon', lat: fix.lat, lng: fix.lng, accuracy: Math.round(fix.accuracy * 10) / 10, meta: { device_id: this.deviceId } };
    const org = this.orgId();
    if (org) body.org_id = org;
    this.inflight = api('POST', '/v1/signals', body)
      .then(() => this.set({ lastSent: Date.now(), sent: this.state.sent + 1, error: null }))
      .catch((err) => this.set({ error: `Beacon not sent: ${messageOf(err)}` }))
      .finally(() => (this.inflight = null));
    return this.inflight;
  }

  async stop() {
    if (!this.state.active) return;
    this.set({ stopping: true });
    window.removeEventListener('online', this.onOnline);
    if (this.watchId !== null) navigator.geolocation.clearWatch(this.watchId);
    if (this.timer !== null) clearInterval(this.timer);
    this.watchId = this.timer = null;
    try {
      localStorage.removeItem(ACTIVE_KEY);
    } catch {
      /* ignore */
    }
    // A beacon still in flight would switch the device back on after the DELETE.
    await this.inflight?.catch(() => undefined);
    await this.wake.disable();
    let error: string | null = null;
    try {
      await api('DELETE', '/v1/signals/beacon', { device_id: this.deviceId });
    } catch (err) {
      // The server also switches a silent device off after a few minutes.
      error = `Stop not confirmed (${messageOf(err)}); the server switches a silent device off after a few minutes.`;
    }
    this.set({ active: false, stopping: false, error: this.state.denied ? this.state.error : error });
  }
}
