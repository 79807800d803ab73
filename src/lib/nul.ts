/**
 * The first field (dotted path) whose text holds U+0000, if any. PostgreSQL text cannot store it
 * ("invalid byte sequence for encoding UTF8: 0x00"), so such input is refused up front as a 422 on
 * both databases instead of failing as a 500 on one of them.
 */
export function fieldWithNul(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'value' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return path ? `${path}.${k}` : k;
    const found = fieldWithNul(v, path ? `${path}.${k}` : k);
    if (found) return found;
  }
  return undefined;
}
