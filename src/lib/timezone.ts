// Building an Intl.DateTimeFormat costs far more than a lookup, and the set of zone names is small.
const known = new Map<string, boolean>();

/** True when the runtime's ICU knows `name` as an IANA time zone (canonical names and links alike). */
export function isTimeZone(name: string): boolean {
  if (!name || name.length > 64) return false;
  let ok = known.get(name);
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: name });
      ok = true;
    } catch {
      ok = false;
    }
    // Only valid names are worth remembering; a flood of invalid ones must not grow the map.
    if (ok) known.set(name, ok);
  }
  return ok;
}
