// A visitor's language as a BCP 47 tag (issue 20): the booking body's `language`, else the best
// of the request's Accept-Language. Stored on the booking so the emails to the visitor follow it.
import { invalidField } from './errors.js';

/**
 * The shape the API accepts, the language-script-region-variant part of BCP 47 (no extensions or
 * private use): a 2-3 letter language, then an optional 4-letter script, an optional region (2
 * letters or 3 digits) and variants (5-8 letters or digits, or a digit and 3 more). Every tag of
 * this shape is one Intl takes, so the documented schema and the answer agree (a repeated variant
 * is the one case left to Intl's check).
 */
export const LANGUAGE_PATTERN = '^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-(?:[A-Za-z]{2}|[0-9]{3}))?(-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*$';
export const LANGUAGE_MAX = 35;
const shape = new RegExp(LANGUAGE_PATTERN);

/** The canonical form of a well-formed tag (`de-de` -> `de-DE`), or undefined. */
export function canonicalLanguage(tag: string): string | undefined {
  if (tag.length > LANGUAGE_MAX || !shape.test(tag)) return undefined;
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
}

/** The tag of highest weight in an Accept-Language header that is well formed (`*` and junk are skipped). */
export function fromAcceptLanguage(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text) return undefined;
  const ranked = text
    .slice(0, 1000)
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const r of ranked) {
    const tag = canonicalLanguage(r.tag);
    if (tag) return tag;
  }
  return undefined;
}

/** The language to record: the body's (422 `language` when malformed), else the header's, else null. */
export function visitorLanguage(given: string | undefined, acceptLanguage: string | string[] | undefined): string | null {
  if (given !== undefined) {
    const tag = canonicalLanguage(given);
    if (!tag) throw invalidField('language', 'must be a BCP 47 language tag, such as de or en-GB');
    return tag;
  }
  return fromAcceptLanguage(acceptLanguage) ?? null;
}
