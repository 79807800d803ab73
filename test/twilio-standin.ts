import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local stand-in for Twilio, for tests: a real HTTP server speaking the part of Twilio's REST API
// Muster uses (2010-04-01 Messages and Calls: HTTP Basic auth with the account SID and auth token,
// form-encoded bodies, JSON answers with `sid` and `status`), recording what it received, and
// sending Twilio's webhooks back the way Twilio does: form-encoded POSTs signed with
// X-Twilio-Signature (HMAC-SHA1 with the auth token over the full URL, then every POST parameter
// sorted by name, each name immediately followed by its value; base64). Twilio's documentation,
// "Secure webhooks" (twilio.com/docs/usage/webhooks/webhooks-security).
//
// Muster's webhook URLs start with its PUBLIC_URL, which no test resolves: `route` maps the public
// origin to where the test app listens (the URL signed stays the public one, as behind a proxy).

/** X-Twilio-Signature of a POST to `url` with these form parameters, as Twilio computes it. */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, name) => acc + name + params[name], url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

export interface SentMessage {
  sid: string;
  to: string;
  from: string;
  body: string;
  statusCallback: string | undefined;
}

export interface PlacedCall {
  sid: string;
  to: string;
  from: string;
  /** The TwiML URL Twilio fetches when the call is answered. */
  url: string;
  method: string;
  statusCallback: string | undefined;
  statusCallbackEvents: string[];
}

/** A webhook's answer: HTTP status, content type and body (TwiML for voice and messaging). */
export interface WebhookAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface TwilioStandIn {
  origin: string;
  accountSid: string;
  authToken: string;
  /** The number Muster sends from (TWILIO_FROM). */
  from: string;
  /** The env Muster needs to use this stand-in. */
  env: Record<string, string>;
  messages: SentMessage[];
  calls: PlacedCall[];
  /** REST requests refused for their credentials. */
  refused: number;
  /** Makes the next REST requests answer this instead (a Twilio error), while set. */
  failWith: { status: number; code: number; message: string } | undefined;
  /** Where the public origin of Muster's URLs is reached in this test: `{ 'http://muster.test': 'http://127.0.0.1:5123' }`. */
  route: Record<string, string>;
  /** Twilio's POST to a webhook URL with these parameters, signed (or with the signature given). */
  post(url: string, params: Record<string, string>, signature?: string): Promise<WebhookAnswer>;
  /** An SMS to one of the account's numbers (the inbound message webhook). */
  inboundSms(url: string, m: { from: string; to?: string; body: string }): Promise<WebhookAnswer>;
  /** The call was answered: Twilio fetches its TwiML from the call's Url. */
  answer(call: PlacedCall): Promise<WebhookAnswer>;
  /** The person pressed digits during a <Gather>: Twilio posts them to its `action` URL. */
  press(call: PlacedCall, actionUrl: string, digits: string): Promise<WebhookAnswer>;
  /** The call ended: Twilio posts the status callback (`completed`, `busy`, `no-answer`, `failed`, `canceled`). */
  callEnded(call: PlacedCall, status: 'completed' | 'busy' | 'no-answer' | 'failed' | 'canceled'): Promise<WebhookAnswer>;
  close(): Promise<void>;
}

const sid = (prefix: string) => prefix + randomBytes(16).toString('hex');

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export async function startTwilioStandIn(opts: { accountSid?: string; authToken?: string; from?: string } = {}): Promise<TwilioStandIn> {
  const accountSid = opts.accountSid ?? sid('AC');
  const authToken = opts.authToken ?? randomBytes(16).toString('hex');
  const from = opts.from ?? '+15005550006';

  const server = http.createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const m = /^\/2010-04-01\/Accounts\/([^/]+)\/(Messages|Calls)\.json$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) return json(res, 404, { code: 20404, message: 'The requested resource was not found', status: 404 });
      const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
      if (req.headers.authorization !== expected || decodeURIComponent(m[1]!) !== accountSid) {
        standIn.refused += 1;
        return json(res, 401, { code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 });
      }
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return json(res, 400, { code: 20001, message: 'Expected a form body', status: 400 });
      if (standIn.failWith) return json(res, standIn.failWith.status, { code: standIn.failWith.code, message: standIn.failWith.message, status: standIn.failWith.status });
      const form = new URLSearchParams(text);
      const to = form.get('To');
      if (!to) return json(res, 400, { code: 21604, message: "A 'To' phone number is required.", status: 400 });
      if (form.get('From') !== from) return json(res, 400, { code: 21606, message: "The 'From' phone number provided is not a valid message-capable Twilio phone number for this destination/account.", status: 400 });
      if (m[2] === 'Messages') {
        const body = form.get('Body');
        if (!body) return json(res, 400, { code: 21602, message: 'Message body is required.', status: 400 });
        const msg: SentMessage = { sid: sid('SM'), to, from, body, statusCallback: form.get('StatusCallback') ?? undefined };
        standIn.messages.push(msg);
        return json(res, 201, { sid: msg.sid, account_sid: accountSid, to, from, body, status: 'queued', direction: 'outbound-api' });
      }
      const url = form.get('Url');
      if (!url && !form.get('Twiml')) return json(res, 400, { code: 21205, message: 'Url parameter is required.', status: 400 });
      const call: PlacedCall = {
        sid: sid('CA'),
        to,
        from,
        url: url ?? '',
        method: form.get('Method') ?? 'POST',
        statusCallback: form.get('StatusCallback') ?? undefined,
        statusCallbackEvents: form.getAll('StatusCallbackEvent'),
      };
      standIn.calls.push(call);
      return json(res, 201, { sid: call.sid, account_sid: accountSid, to, from, status: 'queued', direction: 'outbound-api' });
    })().catch((err: unknown) => json(res, 500, { message: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function post(url: string, params: Record<string, string>, signature = twilioSignature(authToken, url, params)): Promise<WebhookAnswer> {
    const u = new URL(url);
    const target = standIn.route[u.origin] ?? u.origin;
    const res = await fetch(target + u.pathname + u.search, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature, 'user-agent': 'TwilioProxy/1.1', 'i-twilio-idempotency-token': randomBytes(8).toString('hex') },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
  }
  const callParams = (call: PlacedCall, status: string): Record<string, string> => ({
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    CallSid: call.sid,
    CallStatus: status,
    Called: call.to,
    Caller: call.from,
    Direction: 'outbound-api',
    From: call.from,
    To: call.to,
  });

  const standIn: TwilioStandIn = {
    origin,
    accountSid,
    authToken,
    from,
    env: { TWILIO_ACCOUNT_SID: accountSid, TWILIO_AUTH_TOKEN: authToken, TWILIO_FROM: from, TWILIO_API_URL: origin },
    messages: [],
    calls: [],
    refused: 0,
    failWith: undefined,
    route: {},
    post,
    inboundSms: (url, m) =>
      post(url, {
        AccountSid: accountSid,
        ApiVersion: '2010-04-01',
        Body: m.body,
        From: m.from,
        MessageSid: sid('SM'),
        NumMedia: '0',
        NumSegments: '1',
        SmsMessageSid: sid('SM'),
        SmsStatus: 'received',
        To: m.to ?? from,
      }),
    answer: (call) => post(call.url, callParams(call, 'in-progress')),
    press: (call, actionUrl, digits) => post(actionUrl, { ...callParams(call, 'in-progress'), Digits: digits, FinishedOnKey: '' }),
    callEnded: (call, status) => {
      if (!call.statusCallback) throw new Error('the call was placed without a StatusCallback');
      return post(call.statusCallback, { ...callParams(call, status), CallDuration: status === 'completed' ? '31' : '0', Timestamp: new Date().toUTCString(), SequenceNumber: '0' });
    },
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
  return standIn;
}

/** The `action` URL and `numDigits` of the <Gather> in a TwiML document (XML entities decoded). */
export function gatherOf(twiml: string): { action: string; numDigits: string } | undefined {
  const m = /<Gather\b([^>]*)>/.exec(twiml);
  if (!m) return undefined;
  const attr = (name: string) => {
    const v = new RegExp(`\\b${name}="([^"]*)"`).exec(m[1]!)?.[1];
    return v?.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'");
  };
  return { action: attr('action') ?? '', numDigits: attr('numDigits') ?? '' };
}
