import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { selfSignedCert } from '../../../test/peers.js';
import { integrationsWorld, type IntegrationsWorld } from '../../../test/world.js';
import { mailDns } from '../../../test/mail-kit.js';
import { startInboundSmtp, type InboundListener } from './smtp-listener.js';

// The listener's transport: STARTTLS when a certificate is configured, the per-client rate limit.
describe('inbound SMTP transport', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let smtp: InboundListener;
  let address: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-inbound-tls-'));
  before(async () => {
    const { key, cert } = selfSignedCert();
    fs.writeFileSync(path.join(dir, 'key.pem'), key);
    fs.writeFileSync(path.join(dir, 'cert.pem'), cert);
    t = await buildTestApp({
      INBOUND_EMAIL_DOMAIN: 'in.muster.test',
      INBOUND_SMTP_PORT: '0',
      INBOUND_SMTP_HOST: '127.0.0.1',
      INBOUND_SMTP_TLS_KEY: path.join(dir, 'key.pem'),
      INBOUND_SMTP_TLS_CERT: path.join(dir, 'cert.pem'),
      INBOUND_RATE_LIMIT: '3',
    });
    w = await integrationsWorld(t);
    smtp = await startInboundSmtp(t.ctx, { resolver: mailDns().resolver });
    address = (await w.integration()).email_address!;
  });
  after(async () => {
    await smtp.close();
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const transport = (requireTLS: boolean) =>
    nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, requireTLS, tls: { rejectUnauthorized: false } });

  test('STARTTLS is offered and used; the mail then opens an incident', async () => {
    const tr = transport(true);
    try {
      const info = await tr.sendMail({ from: 'tls@example.org', to: address, subject: 'Sent over TLS', text: 'encrypted', messageId: '<tls-1@example.org>' });
      assert.match(String(info.response), /^250/);
    } finally {
      tr.close();
    }
    await smtp.drain();
    assert.equal((await w.tickets({ 'x-api-key': w.liveKey }, `?source_ref=${encodeURIComponent('email:<tls-1@example.org>')}`)).length, 1);
  });

  test('a client over the per-minute connection limit gets 421 (try later)', async () => {
    // One connection was used above; the limit is 3 a minute, on a clock that stands still.
    const codes: (number | undefined)[] = [];
    for (let i = 0; i < 3; i += 1) {
      const tr = transport(false);
      codes.push(await tr.sendMail({ from: 'a@example.org', to: address, subject: `n${i}`, text: 'x' }).then(() => 250, (e: { responseCode?: number }) => e.responseCode));
      tr.close();
    }
    assert.deepEqual(codes, [250, 250, 421]);
  });
});
