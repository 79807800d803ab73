// How a person looks on the dispatcher's map (issue 20): initials inside the marker, one colour
// per person. Kept apart from signals-map.ts so the device list uses it without loading Leaflet.

/**
 * Twelve colours, each at least 4.5:1 against white (WCAG AA for the marker's small white
 * label), none red: red is the incidents' colour. Ratios: see docs/web.md.
 */
export const PERSON_COLORS = [
  '#1d4ed8', // blue 6.70
  '#047857', // emerald 5.48
  '#7c3aed', // violet 5.70
  '#b45309', // amber 5.02
  '#0e7490', // cyan 5.36
  '#be185d', // pink 6.04
  '#4d7c0f', // lime 4.99
  '#334155', // slate 10.35
  '#a21caf', // fuchsia 6.32
  '#0f766e', // teal 5.47
  '#4338ca', // indigo 7.90
  '#9a3412', // orange 7.31
] as const;

/** The person's colour: stable, from the user id alone (consecutive ids differ). */
export const personColor = (userId: number): string => PERSON_COLORS[((userId % PERSON_COLORS.length) + PERSON_COLORS.length) % PERSON_COLORS.length]!;

/** "Nina Near" → "NN", "Cher" → "CH", "" → "?": at most two letters, uppercase. */
export function initialsOf(name: string): string {
  const words = name.trim().split(/\s+/u).filter((w) => /\p{L}|\p{N}/u.test(w));
  if (words.length === 0) return '?';
  const first = (w: string) => [...w.replace(/^[^\p{L}\p{N}]+/u, '')][0] ?? '';
  const text = words.length === 1 ? [...words[0]!.replace(/[^\p{L}\p{N}]/gu, '')].slice(0, 2).join('') : first(words[0]!) + first(words[words.length - 1]!);
  return text.toLocaleUpperCase() || '?';
}

/** WCAG relative-luminance contrast of a #rrggbb colour against white. */
export function contrastWithWhite(hex: string): number {
  const ch = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * ch(0) + 0.7152 * ch(1) + 0.0722 * ch(2);
  return 1.05 / (l + 0.05);
}

/** Positions kept per device: the trail's length. */
export const TRAIL_LENGTH = 20;

/**
 * Adds each device's position to its trail when it moved (page memory only: never stored or
 * sent anywhere). Returns whether any trail changed.
 */
export function recordTrails(trails: Map<string, [number, number][]>, positions: readonly { key: string; lat: number | null; lng: number | null }[]): boolean {
  let changed = false;
  for (const p of positions) {
    if (p.lat === null || p.lng === null) continue;
    const t = trails.get(p.key) ?? [];
    const last = t[t.length - 1];
    if (last && last[0] === p.lat && last[1] === p.lng) continue;
    t.push([p.lat, p.lng]);
    if (t.length > TRAIL_LENGTH) t.splice(0, t.length - TRAIL_LENGTH);
    trails.set(p.key, t);
    changed = true;
  }
  return changed;
}
