/// <reference lib="dom" />
// Issue 20: the invite emails sent before invite links existed point at `/register?email=...`,
// which answered a 404 JSON page. It is now the dashboard's registration with the address filled
// in; registering there signs the person in. At 390 and 1280 px.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { DESKTOP, launchBrowser, PHONE, screenshot, startServer, uniqueEmail, watchErrors, type Server } from './harness.js';

let server: Server;
let browser: Browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('/register is an HTML page, not the JSON 404', async () => {
  const res = await fetch(`${server.url}/register?email=${encodeURIComponent('old-link@example.com')}`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
});

for (const [width, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
  test(`the old invite link opens the registration with the address filled in, and registering signs in (${width})`, async () => {
    const email = uniqueEmail(`old-invite-${width}`);
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/register?email=${encodeURIComponent(email)}`);
    await page.getByTestId('register-form').waitFor();
    assert.equal(await page.getAttribute('role=tab[name="Create account"]', 'aria-selected'), 'true');
    assert.equal(await page.inputValue('#reg-email'), email);
    await screenshot(page, 'register-link');

    await page.fill('#reg-name', `Olga Old-Link ${width}`);
    await page.fill('#reg-password', 'a long enough password');
    await page.click('[data-testid="register-form"] button[type="submit"]');
    await page.waitForSelector('[data-testid="new-incident"]');
    assert.equal(new URL(page.url()).pathname, '/app/incidents');
    const me = await page.evaluate(() => fetch('/v1/auth/me').then((r) => r.json() as Promise<{ email: string }>));
    assert.equal(me.email, email);

    // Signed in, the link goes on to the dashboard instead of showing the form again.
    await page.goto(`${server.url}/register?email=${encodeURIComponent(email)}`);
    await page.waitForSelector('[data-testid="new-incident"]');
    assert.equal(new URL(page.url()).pathname, '/app/incidents');
    // The one 401 is the signed-out page asking who is there.
    assert.deepEqual(errors.filter((e) => !e.includes('status of 401')), []);
    await context.close();
  });
}
