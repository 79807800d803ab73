import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from './config.js';

describe('config', () => {
  test('defaults: port 3000, localhost URL, ./data, SQLite, info logs', () => {
    const c = loadConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.publicUrl, 'http://localhost:3000');
    assert.equal(c.dataDir, path.resolve('./data'));
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.logLevel, 'info');
    assert.deepEqual(c.adminEmails, []);
    assert.equal(c.secureCookies, false);
    assert.ok(Object.isFrozen(c));
  });

  test('reads every variable', () => {
    const c = loadConfig({
      PORT: '8080',
      PUBLIC_URL: 'https://muster.example.com/',
      DATA_DIR: '/var/lib/muster',
      DATABASE_URL: 'postgres://u@db/muster',
      DATABASE_SCHEMA: 'tenant_a',
      MUSTER_ADMIN_EMAILS: ' Ops@Example.com , boss@example.com ',
      LOG_LEVEL: 'WARN',
      TRUST_PROXY: 'true',
      HOST: '127.0.0.1',
      BODY_LIMIT_BYTES: '2048',
    });
    assert.equal(c.port, 8080);
    assert.equal(c.publicUrl, 'https://muster.example.com');
    assert.equal(c.secureCookies, true);
    assert.equal(c.dataDir, '/var/lib/muster');
    assert.equal(c.databaseUrl, 'postgres://u@db/muster');
    assert.equal(c.databaseSchema, 'tenant_a');
    assert.deepEqual(c.adminEmails, ['ops@example.com', 'boss@example.com']);
    assert.equal(c.logLevel, 'warn');
    assert.equal(c.trustProxy, true);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.bodyLimit, 2048);
  });

  test('PUBLIC_URL defaults to the configured port', () => {
    assert.equal(loadConfig({ PORT: '4000' }).publicUrl, 'http://localhost:4000');
  });

  test('reports every bad value at once, naming the variable', () => {
    assert.throws(
      () =>
        loadConfig({
          PORT: 'eighty',
          PUBLIC_URL: 'ftp://x',
          DATABASE_URL: 'mysql://x',
          LOG_LEVEL: 'loud',
          MUSTER_ADMIN_EMAILS: 'not-an-email',
          TRUST_PROXY: 'maybe',
          DATABASE_SCHEMA: 'Robert); DROP',
        }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        const names = ['PORT', 'PUBLIC_URL', 'DATABASE_URL', 'LOG_LEVEL', 'MUSTER_ADMIN_EMAILS', 'TRUST_PROXY', 'DATABASE_SCHEMA'];
        assert.equal(err.problems.length, names.length);
        for (const name of names) assert.ok(err.message.includes(name), name);
        return true;
      },
    );
  });

  test('refuses an out-of-range port', () => {
    assert.throws(() => loadConfig({ PORT: '70000' }), /PORT must be an integer from 1 to 65535/);
    assert.throws(() => loadConfig({ PORT: '0' }), /PORT/);
  });
  test('inbound email: off by default; the port needs the domain, the TLS key its certificate', () => {
    const off = loadConfig({});
    assert.equal(off.inbound.port, undefined);
    assert.equal(off.inboundEmailDomain, undefined);
    const on = loadConfig({ INBOUND_SMTP_PORT: '2525', INBOUND_EMAIL_DOMAIN: 'In.Example.COM', INBOUND_MAX_BYTES: '5000', INBOUND_RATE_LIMIT: '0' });
    assert.deepEqual([on.inbound.port, on.inboundEmailDomain, on.inbound.maxBytes, on.inbound.perMinute], [2525, 'in.example.com', 5000, 0]);
    assert.throws(() => loadConfig({ INBOUND_SMTP_PORT: '2525' }), (err: unknown) => err instanceof ConfigError && /INBOUND_SMTP_PORT needs INBOUND_EMAIL_DOMAIN/.test(err.message));
    assert.throws(() => loadConfig({ INBOUND_EMAIL_DOMAIN: 'in.example.com', INBOUND_SMTP_TLS_KEY: '/k.pem' }), (err: unknown) => err instanceof ConfigError && /go together/.test(err.message));
    assert.throws(() => loadConfig({ INBOUND_EMAIL_DOMAIN: 'not a domain' }), ConfigError);
    // Mail authentication: relays (addresses, ranges) with the authserv-id they write, forwarders (ARC signing domains).
    const trust = loadConfig({ INBOUND_TRUSTED_RELAYS: '10.0.0.0/8, 2001:db8::1', INBOUND_TRUSTED_AUTHSERV_IDS: 'MX.Example.com', INBOUND_TRUSTED_FORWARDERS: 'google.com' });
    assert.deepEqual([trust.inbound.trustedRelays, trust.inbound.relayAuthservIds, trust.inbound.trustedForwarders], [['10.0.0.0/8', '2001:db8::1'], ['mx.example.com'], ['google.com']]);
    assert.throws(() => loadConfig({ INBOUND_TRUSTED_RELAYS: '10.0.0.1' }), (err: unknown) => err instanceof ConfigError && /INBOUND_TRUSTED_AUTHSERV_IDS go together/.test(err.message));
    assert.throws(() => loadConfig({ INBOUND_TRUSTED_RELAYS: 'mx.example.com', INBOUND_TRUSTED_AUTHSERV_IDS: 'mx' }), (err: unknown) => err instanceof ConfigError && /IP addresses or CIDR/.test(err.message));
    assert.throws(() => loadConfig({ INBOUND_TRUSTED_RELAYS: '10.0.0.0/33', INBOUND_TRUSTED_AUTHSERV_IDS: 'mx' }), ConfigError);
    assert.throws(() => loadConfig({ INBOUND_TRUSTED_FORWARDERS: 'not a domain' }), ConfigError);
  });
});
