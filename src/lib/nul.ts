/**
 * The first field (dotted path) whose text holds U+0000, if any. PostgreSQL text cannot store it
 * ("invalid byte sequence for encoding UTF8: 0x00"), so such input is refused up front as a 422 on
 * both databases instead of failing as a 500 on one of them. Iterative (an explicit stack, depth
 * first in key order), so no input, however deep, can overflow the call stack.
 */
export function fieldWithNul(value: unknown, path = ''): string | undefined {
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
