// A real CalDAV server for the tests: Debian's Radicale, started on a free port with a temp
// storage folder and a plain htpasswd user. A machine without it fails the tests with the fix.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface Radicale {
  origin: string;
  username: string;
  password: string;
  /** A raw request as the user (MKCALENDAR, PUT, GET, DELETE ...). */
  request(method: string, urlPath: string, body?: string, headers?: Record<string, string>): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

export async function startRadicale(username = 'ada', password = 'app-password-1'): Promise<Radicale> {
  if (spawnSync('radicale', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error('Radicale is not installed: the CalDAV tests need it (apt-get install -y radicale; .ci/run installs it)');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-radicale-'));
  fs.writeFileSync(path.join(dir, 'users'), `${username}:${password}\n`);
  const port = await freePort();
  const child: ChildProcess = spawn(
    'radicale',
    [
      '--config', '',
      '--server-hosts', `127.0.0.1:${port}`,
      '--storage-filesystem-folder', path.join(dir, 'collections'),
      '--auth-type', 'htpasswd',
      '--auth-htpasswd-filename', path.join(dir, 'users'),
      '--auth-htpasswd-encryption', 'plain',
      '--rights-type', 'owner_only',
      '--logging-level', 'warning',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const origin = `http://127.0.0.1:${port}`;
  const auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const request = (method: string, urlPath: string, body?: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${origin}${urlPath}`, { method, headers: { authorization: auth, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(body);
    });
  // Ready when it answers; it exits at once on a bad option, which fails here with its message.
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`Radicale exited: ${stderr}`);
    try {
      await request('OPTIONS', '/');
      break;
    } catch {
      if (i > 200) throw new Error(`Radicale did not answer on ${origin}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    origin,
    username,
    password,
    request,
    close: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a calendar collection (MKCALENDAR) for VEVENTs. */
export async function makeCalendar(r: Radicale, urlPath: string, name: string): Promise<void> {
  const body = `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>${name}</D:displayname><C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>`;
  const res = await r.request('MKCALENDAR', urlPath, body, { 'content-type': 'application/xml' });
  if (res.status !== 201) throw new Error(`MKCALENDAR ${urlPath}: ${res.status} ${res.body}`);
}
