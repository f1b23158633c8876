import { Writable } from 'node:stream';
import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { loggerOptions } from '../../../src/app';
import { TEST_DATABASE_URL } from '../../support/database';
import { dumpAllRows } from '../../support/database-dump';

/** After card payments of every kind, no full card number and no security code exist in the database or in the logs. */
describe('card data is never stored or logged', () => {
  let t: TestService;
  const logs: string[] = [];
  beforeAll(async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    t = await startTestService({}, { logger: { ...(loggerOptions('trace') as object), stream } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('keeps only first six, last four, expiry, type, issuer and a token', async () => {
    const m = await createTestMerchant(t);
    const k = m.keys.test;
    const cards = ['5123450000000008', '4111111111111111', '4000000000000002', '4242424242424242', '4111111111111112'];
    const cvv = '7391';
    for (const [i, cardNumber] of cards.entries()) {
      const reference = `CARD-${Date.now()}-${i}`;
      await postEncrypted(t.baseUrl, '/checkout/order/create', k.publicKey, k.encryptionKey, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 100, reference, description: 'x', currency: 'NGN' },
        payment: { RedirectUrl: 'https://m.test/back' },
      });
      const paid = await postEncrypted(t.baseUrl, '/checkout/order/pay', k.publicKey, k.encryptionKey, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber, expiryMonth: '11', expiryYear: '31', cvv, billingAddress: { street: 's', city: 'c', country: 'NG' } },
      });
      expect(JSON.stringify(paid.body)).not.toContain(cardNumber);
      const url = paid.body.data?.paymentDetail?.redirectUrl;
      if (url && paid.body.statusCode === '02') {
        await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'otp=123456' });
      }
      const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k.privateKey, body: { reference } });
      expect(verify.text).not.toContain(cardNumber);
    }

    const dump = await dumpAllRows(TEST_DATABASE_URL);
    expect(dump).toContain('512345'); // first six are kept...
    for (const cardNumber of cards) {
      expect(dump).not.toContain(cardNumber);
      expect(dump).not.toContain(cardNumber.slice(0, 12)); // ...but never more of the number
    }
    expect(dump).not.toMatch(/"cvv"/i); // no stored plaintext carries a security code field
    expect(dump).not.toMatch(new RegExp(`[(,]"?${cvv}"?[,)]`)); // nor a column holding it

    const logText = logs.join('');
    expect(logs.length).toBeGreaterThan(10);
    for (const cardNumber of cards) expect(logText).not.toContain(cardNumber);
    // The security code as a value (digits can occur by chance inside timings and ids).
    expect(logText).not.toContain(`"${cvv}"`);
    expect(logText).not.toMatch(/"cvv"|"cardNumber"/i);
    expect(logText).not.toContain(k.privateKey);
    expect(logText).not.toContain(k.publicKey);
  });
});
