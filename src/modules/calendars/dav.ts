// A small CalDAV client (RFC 4791, RFC 6764 discovery): PROPFIND for the principal, the calendar
// home and its calendars, REPORT calendar-query for events in a time range, PUT and DELETE for
// the events Muster writes. Not tsdav: it sends through the global fetch (undici), where the
// webhooks' connect-time SSRF guard cannot sit, and it bounds neither answer size nor redirects.
import type { Element } from 'xml-js';
import type * as XmlJs from 'xml-js';
import { lazyRequire } from '../../lib/lazy-require.js';
import { guardedFetch, type FetchOptions } from './http.js';

// xml-js loads with the first CalDAV answer read, not at every start.
const xmlJs = lazyRequire<typeof XmlJs>('xml-js');

export type DavOptions = Pick<FetchOptions, 'timeoutMs' | 'maxBytes' | 'allowPrivate' | 'auth'>;

export interface DavCalendar {
  url: string;
  name: string;
  /** CalendarServer's getctag, else the sync-token: changes whenever the calendar does. */
  ctag: string | null;
}

export class DavError extends Error {
  constructor(message: string, readonly status: number | null = null) {
    super(message);
    this.name = 'DavError';
  }
}

const local = (name: string | undefined) => (name ?? '').replace(/^.*:/, '').toLowerCase();
const kids = (el: Element | undefined, name?: string): Element[] => (el?.elements ?? []).filter((e) => e.type === 'element' && (!name || local(e.name) === name));
const find = (el: Element | undefined, ...path: string[]): Element | undefined => path.reduce<Element | undefined>((at, p) => kids(at, p)[0], el);
const text = (el: Element | undefined): string => (el?.elements ?? []).map((e) => (e.type === 'text' || e.type === 'cdata' ? String(e.text ?? e.cdata ?? '') : text(e))).join('').trim();

interface Response {
  href: string;
  /** The properties found (status 200), by local name. */
  props: Map<string, Element>;
}

function multistatus(body: string): Response[] {
  let doc: Element;
  try {
    doc = xmlJs().xml2js(body, { compact: false }) as Element;
  } catch {
    throw new DavError('the server answered something that is not XML');
  }
  const root = kids(doc, 'multistatus')[0];
  if (!root) throw new DavError('the server answered without a DAV multistatus');
  return kids(root, 'response').map((r) => {
    const props = new Map<string, Element>();
    for (const ps of kids(r, 'propstat')) {
      if (!/\s2\d\d\s/.test(` ${text(find(ps, 'status'))} `)) continue;
      for (const p of kids(find(ps, 'prop'))) props.set(local(p.name), p);
    }
    return { href: text(find(r, 'href')), props };
  });
}

const DAV_NS = 'xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/"';
const propfindBody = (props: string) => `<?xml version="1.0" encoding="utf-8"?><d:propfind ${DAV_NS}><d:prop>${props}</d:prop></d:propfind>`;

async function dav(method: string, url: string, body: string, depth: '0' | '1', o: DavOptions): Promise<{ responses: Response[]; url: string }> {
  const res = await guardedFetch(url, { ...o, method, body, headers: { 'content-type': 'application/xml; charset=utf-8', depth }, maxRedirects: 3 });
  if (res.status === 401 || res.status === 403) throw new DavError(`the server refused the credentials (HTTP ${res.status})`, res.status);
  if (res.status !== 207) throw new DavError(`${method} ${new URL(res.url).pathname} answered HTTP ${res.status}`, res.status);
  return { responses: multistatus(res.body), url: res.url };
}

const hrefIn = (r: Response | undefined, prop: string) => {
  const h = find(r?.props.get(prop), 'href');
  return h ? text(h) : undefined;
};

/** The calendars of a home collection (Depth 1): one request, also the change check of a sync. */
export async function listCalendars(home: string, o: DavOptions): Promise<DavCalendar[]> {
  const { responses, url } = await dav('PROPFIND', home, propfindBody('<d:resourcetype/><d:displayname/><cs:getctag/><d:sync-token/><c:supported-calendar-component-set/>'), '1', o);
  return responses
    .filter((r) => kids(r.props.get('resourcetype'), 'calendar').length > 0)
    .filter((r) => {
      const comps = kids(r.props.get('supported-calendar-component-set'), 'comp');
      return comps.length === 0 || comps.some((c) => String(c.attributes?.name ?? '').toUpperCase() === 'VEVENT');
    })
    .map((r) => ({
      url: new URL(r.href, url).toString(),
      name: text(r.props.get('displayname')) || decodeURIComponent(new URL(r.href, url).pathname.split('/').filter(Boolean).pop() ?? 'Calendar'),
      ctag: text(r.props.get('getctag')) || text(r.props.get('sync-token')) || null,
    }));
}

/**
 * From whatever URL the user gave (server root, principal, home or one calendar) to the calendar
 * home and its calendars: current-user-principal, then calendar-home-set; `/.well-known/caldav`
 * when the URL itself does not answer (RFC 6764).
 */
export async function discover(start: string, o: DavOptions): Promise<{ home: string; calendars: DavCalendar[] }> {
  const props = propfindBody('<d:current-user-principal/><c:calendar-home-set/><d:resourcetype/>');
  let first: Awaited<ReturnType<typeof dav>>;
  try {
    first = await dav('PROPFIND', start, props, '0', o);
  } catch (err) {
    if (err instanceof DavError && (err.status === 401 || err.status === 403)) throw err;
    first = await dav('PROPFIND', new URL('/.well-known/caldav', start).toString(), props, '0', o);
  }
  const at = first.responses[0];
  if (at && kids(at.props.get('resourcetype'), 'calendar').length > 0) {
    // A calendar's own URL: its parent is the home.
    return { home: new URL('..', first.url).toString(), calendars: (await listCalendars(new URL('..', first.url).toString(), o)).filter((c) => c.url === first.url) };
  }
  let home = hrefIn(at, 'calendar-home-set');
  if (!home) {
    const principal = hrefIn(at, 'current-user-principal');
    if (!principal) throw new DavError('no CalDAV principal found at this address (is it a CalDAV server?)');
    const p = await dav('PROPFIND', new URL(principal, first.url).toString(), propfindBody('<c:calendar-home-set/>'), '0', o);
    home = hrefIn(p.responses[0], 'calendar-home-set');
    if (!home) throw new DavError('the principal names no calendar home');
  }
  const homeUrl = new URL(home, first.url).toString();
  return { home: homeUrl, calendars: await listCalendars(homeUrl, o) };
}

/** The iCalendar texts of the calendar's events that touch `[from, to)` (calendar-query REPORT). */
export async function eventsBetween(calendar: string, from: number, to: number, o: DavOptions): Promise<string[]> {
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const body =
    `<?xml version="1.0" encoding="utf-8"?><c:calendar-query ${DAV_NS}><d:prop><d:getetag/><c:calendar-data/></d:prop>` +
    `<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="${stamp(from)}" end="${stamp(to)}"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`;
  const { responses } = await dav('REPORT', calendar, body, '1', o);
  return responses.map((r) => text(r.props.get('calendar-data'))).filter((t) => t.length > 0);
}

/** Writes one event (an iCalendar object) at `url`, creating or replacing it. */
export async function putEvent(url: string, ics: string, o: DavOptions): Promise<number> {
  const res = await guardedFetch(url, { ...o, method: 'PUT', body: ics, headers: { 'content-type': 'text/calendar; charset=utf-8' } });
  if (res.status >= 200 && res.status < 300) return res.status;
  throw new DavError(`PUT answered HTTP ${res.status}`, res.status);
}

/** Deletes one event; one that is already gone counts as deleted. */
export async function deleteEvent(url: string, o: DavOptions): Promise<number> {
  const res = await guardedFetch(url, { ...o, method: 'DELETE' });
  if ((res.status >= 200 && res.status < 300) || res.status === 404 || res.status === 410) return res.status;
  throw new DavError(`DELETE answered HTTP ${res.status}`, res.status);
}
