/**
 * How deep JSON may nest in a request body. Every body of the API is a few levels deep (the
 * deepest, an event type's availability, is 4; a signal's free-form `meta` gets the rest), and any
 * code that walks parsed input (the NUL check, canonical JSON of idempotency keys, the validator)
 * then stays far from the stack's limit.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * True when `text` nests arrays or objects deeper than `max`. One pass over the characters with a
 * counter, before `JSON.parse`, so a 7,000-level body costs no more than its length and nothing
 * recursive ever sees it. Brackets inside strings do not count; a malformed text is left to the parser.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}
