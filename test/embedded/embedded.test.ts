import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { createService, type Service } from '../../src/bootstrap';
import { DataDirInUseError, startEmbeddedDatabase } from '../../src/db/embedded';
import { graphql, postEncrypted, request } from '../support/http';
import { TEST_ADMIN_TOKEN } from '../support/service';

/**
 * Smoke test of the default database mode: no DATABASE_URL, PGlite under DATA_DIR, the same
 * migrations; data survives a restart.
 */
describe('embedded database (PGlite)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-embedded-'));
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: TEST_ADMIN_TOKEN, LOG_LEVEL: 'silent' });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** A merchant made through the admin's GraphQL mutation: its test keys. */
  async function createMerchant(
    baseUrl: string,
    name: string,
    supportEmail: string,
  ): Promise<{ publicKey: string; privateKey: string; encryptionKey: string }> {
    const created = await graphql(
      baseUrl,
      `
        mutation ($input: CreateMerchantInput!) {
          createMerchant(input: $input) {
            keys {
              test {
                publicKey
                privateKey
                encryptionKey
              }
            }
          }
        }
      `,
      { input: { name, country: 'GH', supportEmail, feeBearer: 'MERCHANT' } },
      { 'x-admin-token': TEST_ADMIN_TOKEN },
    );
    expect(created.body.errors).toBeUndefined();
    return created.body.data.createMerchant.keys.test;
  }

  async function start(): Promise<{ service: Service; baseUrl: string }> {
    const service = await createService(config, { logger: false });
    await service.app.listen({ port: 0, host: '127.0.0.1' });
    const address = service.app.server.address() as { port: number };
    return { service, baseUrl: `http://127.0.0.1:${address.port}` };
  }

  it('migrates, serves, keeps data across a restart, and locks its DATA_DIR', async () => {
    let { service, baseUrl } = await start();
    expect(service.runtime.db.mode).toBe('embedded');
    expect(service.runtime.generatedMasterKeyFile).toBe(path.join(dataDir, 'master.key'));
    expect((await fetch(`${baseUrl}/health`)).status).toBe(200);
    expect(await (await fetch(`${baseUrl}/health`)).json()).toEqual({ status: 'ok' });

    // A second process on the same files is refused while the server holds them.
    await expect(startEmbeddedDatabase(dataDir)).rejects.toBeInstanceOf(DataDirInUseError);

    const { publicKey, privateKey, encryptionKey } = await createMerchant(baseUrl, 'Embedded Ltd', 'e@e.test');
    await service.close();

    ({ service, baseUrl } = await start());
    try {
      expect((await fetch(`${baseUrl}/health`)).status).toBe(200);
      const merchant = await graphql(baseUrl, '{ merchant { subsidiary { name country } } }', {}, { 'api-key': publicKey });
      expect(merchant.body).toEqual({ data: { merchant: { subsidiary: { name: 'Embedded Ltd', country: 'GH' } } } });
      const banks = await fetch(`${baseUrl}/checkout/banks`, { headers: { 'api-key': publicKey } });
      expect(((await banks.json()) as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(30);

      // A card payment through 3-D Secure on the single embedded connection.
      const reference = `EMB-${Date.now()}`;
      const order = await postEncrypted(baseUrl, '/checkout/order/create', publicKey, encryptionKey, {
        customer: { firstname: 'Kofi', lastname: 'Mensah', mobile: '+233201234567', country: 'GH', email: 'kofi@example.test' },
        order: { amount: 250, reference, description: 'Embedded', currency: 'GHS' },
        payment: { RedirectUrl: 'https://m.test/back' },
      });
      expect(order.body.statusCode).toBe('01');
      const paid = await postEncrypted(baseUrl, '/checkout/order/pay', publicKey, encryptionKey, {
        reference,
        paymentOption: 'C',
        country: 'GH',
        card: {
          cardNumber: '4111111111111111',
          expiryMonth: '12',
          expiryYear: '30',
          cvv: '123',
          billingAddress: { street: 's', city: 'Accra', country: 'GH' },
        },
      });
      expect(paid.body.statusCode).toBe('02');
      const otpUrl = paid.body.data.paymentDetail.redirectUrl.replace(/^https?:\/\/[^/]+/, baseUrl);
      const answer = await fetch(otpUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'otp=123456',
      });
      expect(answer.headers.get('location')).toContain('status=successful');
      const verify = await request(baseUrl, 'POST', '/checkout/order/verify', { apiKey: privateKey, body: { reference } });
      expect(verify.body.data).toMatchObject({ statusId: 5, totalAmountCharged: 250 });
    } finally {
      await service.close();
    }
  }, 120_000);

  it('runs its prepared statements again after its one connection to the database is replaced', async () => {
    const { service, baseUrl } = await start();
    try {
      const { publicKey, privateKey, encryptionKey } = await createMerchant(baseUrl, 'Reconnect Ltd', 'r@r.test');
      const link = (
        await request(baseUrl, 'POST', '/checkout/links/create', {
          apiKey: privateKey,
          body: { Name: 'Reconnect link', Description: 'd', PaymentType: 'MC', AuthOption: 'NOAUTH', Currency: 'GHS' },
        })
      ).body.data.paymentLink;
      let n = 0;
      // An order on the link, a plain one, and both read back: each a named prepared statement.
      const round = async () => {
        const answers = [];
        for (const paymentLinkId of [link.id, undefined]) {
          const reference = `RECONNECT-${Date.now()}-${(n += 1)}`;
          const order = await postEncrypted(baseUrl, '/checkout/order/create', publicKey, encryptionKey, {
            customer: { firstname: 'Kofi', lastname: 'Mensah', mobile: '+233201234567', country: 'GH', email: 'kofi@example.test' },
            order: { amount: 250, reference, description: 'Reconnect', currency: 'GHS' },
            payment: { RedirectUrl: 'https://m.test/back', ...(paymentLinkId ? { PaymentLinkId: paymentLinkId } : {}) },
          });
          const verify = await request(baseUrl, 'POST', '/checkout/order/verify', { apiKey: privateKey, body: { reference } });
          const status = await postEncrypted(baseUrl, '/checkout/order/status', publicKey, encryptionKey, { reference });
          answers.push([order.status, order.body.statusCode, verify.status, status.status]);
        }
        return answers;
      };
      const ok = [
        [200, '01', 200, 200],
        [200, '01', 200, 200],
      ];
      expect(await round()).toEqual(ok);
      // The pool's one connection goes (as after a socket error); the next request opens another to the same session.
      type KnexClient = { acquireConnection(): Promise<{ end(): Promise<void> }>; releaseConnection(c: unknown): Promise<void> };
      const knex = service.runtime.db.orm.em.getConnection().getKnex().client as unknown as KnexClient;
      const connection = await knex.acquireConnection();
      await connection.end();
      await knex.releaseConnection(connection);
      expect(await round()).toEqual(ok);
    } finally {
      await service.close();
    }
  }, 120_000);
});
