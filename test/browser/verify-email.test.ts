/// <reference lib="dom" />
// The link of the "confirm your email address" email (/verify-email?email=&code=) answered a 404
// JSON page. It is a page now: one click confirms the address (a mail scanner that opens the link
// spends nothing), and a used or expired link offers a new email. At 390 and 1280 px.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browser, browserSuite, call, DESKTOP, PHONE, screenshot, server, uniqueEmail, watchErrors } from './harness.js';

browserSuite();

/** The confirmation links emailed to `email` so far (the development mailer logs each email's text). */
function links(email: string): string[] {
  const encoded = encodeURIComponent(email).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`https?://[^\\s"\\\\]+/verify-email\\?email=${encoded}&code=\\d{6}`, 'g');
  return [...new Set(server.output().match(re) ?? [])];
}

async function waitForLinks(email: string, count: number): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    const found = links(email);
    if (found.length >= count) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected ${count} confirmation links for ${email}, found ${links(email).length}`);
}

for (const [width, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
  test(`the emailed confirmation link confirms the address with one click; used again, it offers a new one (${width})`, async () => {
    const email = uniqueEmail(`confirm-${width}`);
    const password = 'a long enough password';
    const created = await call(server, 'POST', '/v1/users', { email, password, name: `Cora Confirm ${width}` });
    assert.equal(created.status, 201);
    const [link] = await waitForLinks(email, 1);
    const path = new URL(link!).pathname + new URL(link!).search;

    const res = await fetch(`${server.url}${path}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);

    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(server.url + path);
    await page.getByTestId('verify-confirm').waitFor();
    assert.ok((await page.textContent('[data-testid="verify-email-page"]'))?.includes(email));
    await screenshot(page, 'verify-email');
    await page.click('[data-testid="verify-confirm"]');
    await page.getByTestId('verify-done').waitFor();
    await screenshot(page, 'verify-email-done');

    const login = await fetch(`${server.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith('muster_session='))!.split(';')[0]!;
    const me = await call<{ email_verified: boolean }>(server, 'GET', '/v1/auth/me', undefined, cookie);
    assert.equal(me.body.email_verified, true, 'the address is proven');

    // The same link again: the code is spent. The page says so and sends a new one on request;
    // the address is proven already, so no new email goes out (the answer is the same either way).
    await page.goto(server.url + path);
    await page.click('[data-testid="verify-confirm"]');
    await page.getByTestId('verify-expired').waitFor();
    await screenshot(page, 'verify-email-expired');
    await page.click('[data-testid="verify-expired"] button');
    await page.getByTestId('verify-resent').waitFor();
    // The one 401 is the spent code's answer.
    assert.deepEqual(errors.filter((e) => !e.includes('status of 401')), []);
    await context.close();
  });
}

test('a second confirmation email, asked for from a used link before the address was proven, carries a working link', async () => {
  const email = uniqueEmail('confirm-resend');
  await call(server, 'POST', '/v1/users', { email, password: 'a long enough password', name: 'Rae Resend' });
  const [first] = await waitForLinks(email, 1);
  const spent = new URL(first!);
  spent.searchParams.set('code', spent.searchParams.get('code') === '000000' ? '111111' : '000000');
  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  await page.goto(server.url + spent.pathname + spent.search);
  await page.click('[data-testid="verify-confirm"]');
  await page.getByTestId('verify-expired').waitFor();
  await page.click('[data-testid="verify-expired"] button');
  await page.getByTestId('verify-resent').waitFor();
  const all = await waitForLinks(email, 2);
  const second = new URL(all.find((l) => l !== first)!);
  await page.goto(server.url + second.pathname + second.search);
  await page.click('[data-testid="verify-confirm"]');
  await page.getByTestId('verify-done').waitFor();
  await context.close();
});
