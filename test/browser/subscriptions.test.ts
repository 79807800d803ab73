/// <reference lib="dom" />
// Incident subscriptions in the pages (issue #37): an org admin adds a chat subscription on the
// org's page, sends a test to a stand-in of Slack's incoming webhook and reads its answer there; a
// 410 from the room turns the subscription off (the outbox worker of the real server sends it),
// the page says so, and the admin turns it on again. Members see no subscriptions card (their API
// answer is 403). Every page state is checked by axe-core.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { slackAnswer } from '../chat-shapes.js';
import { startReceiver, until } from '../peers.js';
import { type ApiUser, browser, browserSuite, DESKTOP, noHorizontalOverflow, ok, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

const room = await startReceiver();
let admin: ApiUser;
let member: ApiUser;
let org: { id: number; slug: string };

browserSuite({
  env: { MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' },
  setUp: async () => {
    admin = await signUp(server, { name: 'Ada Admin', timezone: 'UTC' });
    member = await signUp(server, { name: 'Max Member', timezone: 'UTC' });
    await ok('PATCH', `/v1/users/${admin.id}`, { plan: 'agency' }, admin);
    org = await ok<{ id: number; slug: string }>('POST', '/v1/orgs', { name: 'Water Board' }, admin);
    await ok('POST', `/v1/orgs/${org.slug}/members`, { email: member.email, role: 'member' }, admin);
  },
});

after(() => room.close());

test('an admin adds a chat subscription, sends a test, and turns it on again after the room answered 410', async () => {
  room.respond = slackAnswer;
  const context = await signedInContext(browser, server, admin, { viewport: DESKTOP, timezoneId: 'UTC', locale: 'en-GB' });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/app/orgs/${org.slug}`);
  const card = page.getByTestId('subscriptions');
  await card.getByText('No subscriptions yet.').waitFor();

  // The API's 422 is said beside its field (here: a URL that is not http(s)).
  await card.locator('#sub-url').fill('ftp://hooks.example.com/x');
  await card.getByTestId('subscription-add').click();
  await card.locator('#err-url').waitFor();

  await card.locator('#sub-url').fill(`${room.origin}/services/T0/B0/XXXX`);
  await card.locator('#sub-format').selectOption('chat');
  await card.getByLabel('Public reply').check();
  await card.locator('#sub-description').fill('#ops room');
  await card.getByTestId('subscription-add').click();
  const row = card.getByTestId('subscription').filter({ hasText: '#ops room' });
  await row.waitFor();
  assert.match(await row.innerText(), /Chat room: Slack, Mattermost, Rocket\.Chat/);
  assert.match(await row.innerText(), /Created\s+Acknowledged\s+Resolved\s+Public reply/);
  const [sub] = (await ok<{ data: { id: number; events: string[]; format: string }[] }>('GET', `/v1/orgs/${org.slug}/webhooks`, undefined, admin)).data;
  assert.deepEqual([sub!.format, sub!.events], ['chat', ['incident.created', 'incident.acknowledged', 'incident.resolved', 'incident.reply']]);

  await row.getByTestId('subscription-test').click();
  await row.getByTestId('subscription-test-result').getByText('Delivered: the receiver answered 200 (ok).').waitFor();
  assert.equal(room.requests.length, 1);
  await screenshot(page, 'org-subscriptions');

  // The room is archived: Slack answers 410, and the subscription turns itself off.
  room.respond = () => ({ status: 410, body: 'channel_is_archived' });
  await ok('POST', '/v1/tickets', { title: 'Pump 3 stopped', org_id: org.id, priority: 'urgent' }, admin);
  await until(async () => !(await ok<{ enabled: boolean }>('GET', `/v1/orgs/${org.slug}/webhooks/${sub!.id}`, undefined, admin)).enabled, 'the 410 turns it off', 10_000);
  await page.reload();
  const off = card.getByTestId('subscription').filter({ hasText: '#ops room' });
  await off.getByTestId('subscription-off').getByText(/Off: 410 Gone from the receiver/).waitFor();
  await screenshot(page, 'org-subscriptions-off');
  room.respond = slackAnswer;
  await off.getByRole('button', { name: 'Turn on' }).click();
  await off.getByTestId('subscription-off').waitFor({ state: 'detached' });
  await noHorizontalOverflow(page);
  assert.deepEqual(errors.filter((e) => !/status of 422/.test(e)), []);
  await context.close();
});

test('a member sees no subscriptions on the org page; the phone layout holds', async () => {
  const context = await signedInContext(browser, server, member, { viewport: PHONE, timezoneId: 'UTC', locale: 'en-GB' });
  const page = await context.newPage();
  await page.goto(`${server.url}/app/orgs/${org.slug}`);
  await page.getByTestId('member-list').waitFor();
  assert.equal(await page.getByTestId('subscriptions').count(), 0);
  await context.close();
  const adminPhone = await signedInContext(browser, server, admin, { viewport: PHONE, timezoneId: 'UTC', locale: 'en-GB' });
  const p = await adminPhone.newPage();
  await p.goto(`${server.url}/app/orgs/${org.slug}`);
  await p.getByTestId('subscription').first().waitFor();
  await noHorizontalOverflow(p);
  await screenshot(p, 'org-subscriptions');
  await adminPhone.close();
});
