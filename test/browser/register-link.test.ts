/// <reference lib="dom" />
// Issue 33, first run: a fresh instance (no account) opens on "Create account"; the first account
// lands on a welcome that says where the confirmation email went, that the instance is theirs, and
// lets them set their own plan; the admin page sets the default plan of new registrations.
// Issue 20: the invite emails sent before invite links existed point at `/register?email=...`,
// which answered a 404 JSON page. It is now the dashboard's registration with the address filled
// in; registering there signs the person in. At 390 and 1280 px.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browser, browserSuite, DESKTOP, PHONE, screenshot, server, uniqueEmail, watchErrors } from './harness.js';

browserSuite();

test('first run: a fresh instance opens on "Create account"; the first admin is welcomed, sets their own plan and the default plan of new accounts', async () => {
  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/app/`);
  await page.getByTestId('first-run').waitFor();
  assert.equal(await page.getAttribute('role=tab[name="Create account"]', 'aria-selected'), 'true');
  await page.getByTestId('register-form').waitFor();
  await screenshot(page, 'first-run-register');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'first-run-register');
  await page.setViewportSize(PHONE);

  const email = uniqueEmail('first-admin');
  await page.fill('#reg-name', 'Fiona First');
  await page.fill('#reg-email', email);
  await page.fill('#reg-password', 'a long enough password');
  await page.click('[data-testid="register-form"] button[type="submit"]');
  await page.getByTestId('welcome').waitFor();
  assert.equal(new URL(page.url()).pathname, '/app/welcome');
  assert.match((await page.getByTestId('welcome-email').textContent()) ?? '', new RegExp(`We sent a confirmation email to ${email.replace(/[.+]/g, '\\$&')}`));
  assert.match((await page.getByTestId('welcome-admin').textContent()) ?? '', /This Muster is yours.*administrator/);
  assert.equal(await page.getByTestId('welcome-plan').textContent(), 'free');
  await screenshot(page, 'first-run-welcome');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'first-run-welcome');

  await page.selectOption('[data-testid="welcome-plan-select"]', 'enterprise');
  await page.click('[data-testid="welcome-plan-save"]');
  await page.getByTestId('welcome-plan-saved').waitFor();
  const me = await page.evaluate(() => fetch('/v1/auth/me').then((r) => r.json() as Promise<{ plan: string; admin: boolean }>));
  assert.deepEqual([me.plan, me.admin], ['enterprise', true]);
  // With a plan that allows it, the first organization is created without "Upgrade required".
  const org = await page.evaluate(() => fetch('/v1/orgs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'First Water' }) }).then((r) => r.status));
  assert.equal(org, 201);

  // The admin page: the default plan of new registrations (registration answers it).
  await page.goto(`${server.url}/app/admin`);
  await page.getByTestId('default-plan-select').waitFor();
  assert.equal(await page.inputValue('[data-testid="default-plan-select"]'), 'free');
  await page.selectOption('[data-testid="default-plan-select"]', 'starter');
  await page.getByTestId('default-plan-saved').waitFor();
  await screenshot(page, 'first-run-admin-default-plan');
  await page.setViewportSize(PHONE);
  await screenshot(page, 'first-run-admin-default-plan');
  const later = await fetch(`${server.url}/v1/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: uniqueEmail('later'), password: 'a long enough password', name: 'Lars Later' }) });
  assert.equal(((await later.json()) as { plan: string }).plan, 'starter');
  await page.selectOption('[data-testid="default-plan-select"]', 'free');
  await page.getByTestId('default-plan-saved').waitFor();
  assert.deepEqual(errors.filter((e) => !e.includes('status of 401')), []);
  await context.close();
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
    // A new account lands on the welcome, which says where the confirmation email went (issue 33).
    await page.getByTestId('welcome').waitFor();
    assert.match((await page.getByTestId('welcome-email').textContent()) ?? '', new RegExp(`confirmation email to ${email.replace(/[.+]/g, '\\$&')}`));
    assert.equal(await page.getByTestId('welcome-admin').count(), 0, 'not the first account: no admin welcome');
    await screenshot(page, 'register-link-welcome');
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
