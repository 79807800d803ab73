// Screen Wake Lock while the beacon runs: requested on start and again each time the page becomes
// visible (the browser releases it whenever the page is hidden).
type Sentinel = { released: boolean; release(): Promise<void>; addEventListener(t: 'release', fn: () => void): void };
type WakeLockApi = { request(type: 'screen'): Promise<Sentinel> };

export class WakeLock {
  private sentinel: Sentinel | null = null;
  private wanted = false;
  readonly supported = typeof navigator !== 'undefined' && 'wakeLock' in navigator;

  constructor(private onChange: (held: boolean) => void) {
    document.addEventListener('visibilitychange', () => {
      if (this.wanted && document.visibilityState === 'visible') void this.acquire();
    });
  }

  async enable() {
    this.wanted = true;
    await this.acquire();
  }

  async disable() {
    this.wanted = false;
    const s = this.sentinel;
    this.sentinel = null;
    if (s && !s.released) await s.release().catch(() => undefined);
    this.onChange(false);
  }

  private async acquire() {
    if (!this.supported || (this.sentinel && !this.sentinel.released)) return;
    try {
      const s = await (navigator as Navigator & { wakeLock: WakeLockApi }).wakeLock.request('screen');
      if (!this.wanted) return void s.release();
      this.sentinel = s;
      s.addEventListener('release', () => this.onChange(false));
      this.onChange(true);
    } catch {
      this.onChange(false); // refused (battery saver, permissions policy) or hidden meanwhile
    }
  }
}
