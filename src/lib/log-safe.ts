/**
 * What a log line may say about a request. Secrets travel in URLs (status, management and feed
 * tokens, upload keys, and tools that can only be given a URL carry their key in it), so a
 * logged URL is the route's pattern with only the harmless parameters filled in, and a query
 * string keeps its parameter names, never their values.
 */
const SECRET_PARAM = /token|key|secret|code|password|signature/i;
/** Outside any route (a 404), a long path segment may be a token: it is left out. */
const LONG_SEGMENT = 16;

interface LoggedRequest {
  url: string;
  method?: string;
  ip?: string;
  params?: unknown;
  routeOptions?: { url?: string | undefined };
}

export function safeUrl(req: LoggedRequest): string {
  const at = req.url.indexOf('?');
  const path = at === -1 ? req.url : req.url.slice(0, at);
  const query = at === -1 ? '' : req.url.slice(at + 1);
  const pattern = req.routeOptions?.url;
  const params = (req.params ?? {}) as Record<string, string | undefined>;
  const shown =
    pattern && !pattern.includes('*')
      ? pattern.replace(/:([A-Za-z0-9_]+)/g, (whole, name: string) =>
          SECRET_PARAM.test(name) || params[name] === undefined ? whole : encodeURIComponent(params[name]),
        )
      : path
          .split('/')
          .map((s) => (s.length >= LONG_SEGMENT ? ':redacted' : s))
          .join('/');
  const names = query ? [...new Set(new URLSearchParams(query).keys())] : [];
  return names.length ? `${shown}?${names.join('&')}` : shown;
}

/** pino's `req` serializer: method, safe URL and client address; never headers or bodies. */
export function safeRequest(req: LoggedRequest) {
  return { method: req.method, url: safeUrl(req), remoteAddress: req.ip };
}
