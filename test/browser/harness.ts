// Browser tests: a real server started from the build (`node dist/server.js`) on a fresh data
// directory, and Debian's Chromium driven by playwright-core. `npm run test:browser` builds first.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { GENEROUS_RATE_LIMITS, type Headers, type Method } from '../helpers.js';
import { uniqueEmail, type TestUser } from '../factories.js';
import { expectedStatus, type WorldApi } from '../world.js';
import { freePort } from '../ports.js';
import { REPO_ROOT } from '../entry.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * Chromium's headless shell (Debian's chromium-headless-shell: the same Blink and V8 as the browser, without its
 * windowing and UI layers; what Playwright itself runs for headless tests). It costs about half the browser's CPU
 * (test/browser/field.test.ts: 50 against 93 CPU-s of the machine, user + system of /proc/stat over the run) and has
 * no push service, so a test that subscribes to Web Push launches the full browser itself (launchBrowser({ push: true })).
 * Where it is missing, or where CHROMIUM_PATH names a browser, every test runs that browser.
 */
export const HEADLESS_SHELL = process.env.CHROMIUM_PATH ? undefined : (process.env.CHROMIUM_HEADLESS_SHELL_PATH ?? '/usr/bin/chromium-headless-shell');
export const SCREENSHOT_DIR = path.resolve(process.env.SCREENSHOT_DIR ?? 'test/browser/screenshots');
// The repository (when this file runs compiled, it lives in .test-build/<run>/test/browser/).
const ROOT = REPO_ROOT;

export interface Server {
  url: string;
  dataDir: string;
  /** Everything the server printed (JSON log lines): emails are logged when no SMTP_URL is set. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `node dist/server.js` on a free port with its own DATA_DIR (rate limits lifted, no map tiles); resolves once /readyz answers. */
export async function startServer(env: Record<string, string> = {}): Promise<Server> {
  if (!fs.existsSync(path.join(ROOT, 'dist/server.js')) || !fs.existsSync(path.join(ROOT, 'dist/web/app.html'))) {
    throw new Error('dist/ is not built: run `npm run test:browser` (it builds first) or `npm run build`');
  }
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-browser-'));
  const url = `http://127.0.0.1:${port}`;
  let out = '';
  const child: ChildProcess = spawn(process.execPath, ['dist/server.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      // Like buildTestApp: browser tests sign up many users from one address, and this machine has no
      // network for map tiles. A test that checks a limit or tiles sets its own values.
      ...GENEROUS_RATE_LIMITS,
      MAP_TILE_URL: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`server exited during start:\n${out}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (i > 600) throw new Error(`server did not become ready:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    dataDir,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Headless Chromium with the flags this sandbox needs (no background networking to Google): the headless shell unless `push`. */
export async function launchBrowser(options: { push?: boolean } = {}): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const shell = !options.push && HEADLESS_SHELL !== undefined && fs.existsSync(HEADLESS_SHELL);
  return chromium.launch({
    executablePath: shell ? HEADLESS_SHELL : CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export const PHONE = { width: 390, height: 844 } as const;
export const DESKTOP = { width: 1280, height: 800 } as const;

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core in the page as it is now and throws on any serious or critical violation (WCAG 2.x
 * A and AA rules and axe's best practices). Injected through the DevTools protocol, so the pages'
 * Content-Security-Policy stays as it is. Frames are checked by the tests of their own pages.
 */
export async function checkA11y(page: Page, label: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { iframes: false, resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length === 0) return;
  const lines = bad.map((v) => `${v.id} (${v.impact}): ${v.help}\n${v.nodes.slice(0, 6).map((n) => `    ${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`).join('\n')}`);
  throw new Error(`accessibility (axe-core) on ${label} (${page.url()}):\n  ${lines.join('\n  ')}`);
}

/**
 * Saves a full-page screenshot as `<name>-<phone|desktop>.png` under SCREENSHOT_DIR (not committed),
 * and checks the page with axe-core first: every page state a test looks at is also checked for
 * serious and critical accessibility violations (A11Y_REPORT_ONLY=1 prints them instead of failing).
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  try {
    await checkA11y(page, name);
  } catch (err) {
    if (process.env.A11Y_REPORT_ONLY !== '1') throw err;
    console.error(String(err));
  }
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const size = page.viewportSize();
  const kind = size && size.width < 700 ? 'phone' : 'desktop';
  const file = path.join(SCREENSHOT_DIR, `${name}-${kind}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Collects console errors and failed requests of a page, so a test can assert the page ran cleanly. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  return errors;
}

export { uniqueEmail };

/** A user the test made through the API; `cookie` (`muster_session=...`) is for fetch calls made by the test itself. */
export type ApiUser = TestUser;

/** JSON call from the test (not the browser) with an optional session cookie. */
export async function call<T = unknown>(server: Server, method: string, urlPath: string, body?: unknown, cookie?: string): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (cookie) headers.cookie = cookie;
  const res = await fetch(server.url + urlPath, { method, headers, body: body === undefined ? null : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/**
 * Proves a new account's address as its owner would: the code of the confirmation email, which the
 * server logs without SMTP. Proven accounts join an org when added by email (SECURITY.md).
 */
async function proveAddress(server: Server, email: string): Promise<void> {
  let code: string | undefined;
  for (let i = 0; i < 100 && !code; i++) {
    const lines = server.output().split('\n').filter((l) => l.includes(email) && l.includes('confirmation code'));
    code = lines.map((l) => /confirmation code(?: is|[^:]*:) (\d{6})/.exec(l)?.[1]).find(Boolean);
    if (!code) await new Promise((r) => setTimeout(r, 50));
  }
  if (!code) throw new Error(`no confirmation code was logged for ${email}`);
  const res = await call(server, 'POST', '/v1/auth/verify-email', { email, code });
  if (res.status !== 200) throw new Error(`verify-email: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Registers (proving the address) and logs in a user through the API. */
export async function signUp(server: Server, fields: { name?: string; timezone?: string; email?: string } = {}): Promise<ApiUser> {
  const input = { email: uniqueEmail(), password: 'correct horse battery', name: 'Test User', ...fields };
  const created = await call<{ id: number; email: string; name: string; slug: string }>(server, 'POST', '/v1/users', input);
  if (created.status !== 201) throw new Error(`register: ${created.status} ${JSON.stringify(created.body)}`);
  await proveAddress(server, input.email);
  const res = await fetch(`${server.url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: input.email, password: input.password }),
  });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${await res.text()}`);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('muster_session='))?.split(';')[0];
  if (!cookie) throw new Error('login set no session cookie');
  return { ...created.body, password: input.password, cookie };
}

/** A browser context already signed in as `user` (the session cookie set on the server's origin). */
export async function signedInContext(browser: Browser, server: Server, user: ApiUser, options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  const [name, value] = user.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
  return context;
}

/** Fails when the page scrolls sideways at its viewport width, naming the first elements that stick out. */
export async function noHorizontalOverflow(page: Page): Promise<void> {
  const over = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const wide = Array.from(document.querySelectorAll<HTMLElement>('body *')).filter((el) => el.getBoundingClientRect().right > width + 1).slice(0, 3);
    return { by: document.documentElement.scrollWidth - width, wide: wide.map((el) => `${el.tagName.toLowerCase()}.${el.className}`) };
  });
  assert.ok(over.by <= 0, `${page.url()} scrolls sideways by ${over.by}px at ${page.viewportSize()?.width}px: ${over.wide.join(', ')}`);
}

/** The world builder's API (test/world.ts) over HTTP: people and records made through `server`'s API as any client would. */
export function serverApi(server: Server): WorldApi {
  async function ok<T>(headers: Headers, method: Method, url: string, payload?: object, status?: number): Promise<T> {
    const { cookie, ...others } = headers;
    assert.deepEqual(others, {}, 'calls over HTTP carry a session cookie only');
    const res = await call<T>(server, method, url, payload, cookie);
    assert.equal(res.status, expectedStatus(method, status), `${method} ${url}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
  return { signUp: (fields) => signUp(server, fields), ok };
}

// ---------------------------------------------------------------------------------------------
// The suite: every browser test file calls browserSuite() once, at its top.
// ---------------------------------------------------------------------------------------------

/** The file's server and Chromium, set by browserSuite()'s before hook (live bindings: read them inside tests and hooks). */
export let server: Server;
export let browser: Browser;

/**
 * Registers the hooks of a browser test file: a server started from the build (with `env`) and
 * Chromium before its first test, then the file's own `setUp` (its fixture, made through the
 * server), all stopped after its last test. The fixture goes here rather than in a before hook of
 * its own: Node 20 does not wait for one top-level before hook to end before starting the next.
 */
export function browserSuite(options: { env?: Record<string, string>; setUp?: () => Promise<void> } = {}): void {
  before(async () => {
    server = await startServer(options.env);
    browser = await launchBrowser();
    await options.setUp?.();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });
}

/** The body of a JSON call to the suite's server as `user`, asserting its status (201 for POST, else 200). */
export async function ok<T>(method: string, path: string, body: unknown, user: ApiUser, status?: number): Promise<T> {
  const res = await call<T>(server, method, path, body, user.cookie);
  assert.equal(res.status, expectedStatus(method, status), `${method} ${path}: ${JSON.stringify(res.body)}`);
  return res.body;
}
