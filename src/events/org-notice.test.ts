// Which org a notice drops from the per-org caches (subscriptions, sites, integration keys).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { orgNoticeOf } from './org-cache.js';

test('a per-org cache drops the org its own notice names, and a deleted org; never on a membership, a device or another kind', () => {
  const sites = orgNoticeOf('sitesOf');
  const keys = orgNoticeOf('integrationsOf');
  assert.equal(sites({ sitesOf: 7 }), 7);
  assert.equal(keys({ integrationsOf: 8 }), 8);
  assert.equal(sites({ integrationsOf: 8 }), undefined, 'another kind');
  assert.equal(keys({ subscriptionsOf: 9 }), undefined, 'another kind');
  assert.equal(keys({ orgId: 5 }), 5, 'the org was deleted');
  assert.equal(orgNoticeOf('subscriptionsOf')({ orgId: 5 }), 5);
  assert.equal(keys({ userId: 3, orgId: 5 }), undefined, 'a membership changed: nothing of the org');
  assert.equal(keys({ deviceId: 4, orgId: 5 }), undefined, 'a device');
  assert.equal(keys({ keyId: 2 }), undefined);
  assert.equal(keys({ userRow: 3 }), undefined);
});
