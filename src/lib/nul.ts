/**
 * The first field (dotted path) whose text holds U+0000, if any. PostgreSQL text cannot store it
 * ("invalid byte sequence for encoding UTF8: 0x00"), so such input is refused up front as a 422 on
 * both databases instead of failing as a 500 on one of them. Iterative (an explicit stack, depth
 * first in key order), so no input, however deep, can overflow the call stack.
 */
export function fieldWithNul(value: unknown, path = ''): string | undefined {
  // Nearly every input holds none: a walk that builds no paths says so; only then is the path searched.
  return hasNul(value) ? nulPath(value, path) : undefined;
}

/** Whether any text or key in the value holds U+0000 (iterative, like nulPath, with no path strings). */
function hasNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
      continue;
    }
    for (const k of Object.keys(v)) {
      if (k.includes('\u0000')) return true;
      stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return false;
}

/** The first field holding U+0000, depth first in key order (undefined if none). */
function nulPath(value: unknown, path: string): string | undefined {
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return at || 'value';
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    const entries: [string, unknown][] = Object.entries(v);
    for (const [k] of entries) if (k.includes('\u0000')) return at ? `${at}.${k}` : k;
    // Pushed in reverse so the first key is looked at first, as the recursive walk did.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, child] = entries[i]!;
      stack.push([child, at ? `${at}.${k}` : k]);
    }
  }
  return undefined;
}
