import Decimal from 'decimal.js';
import { cli, cliEnvironment } from '../../support/cli';
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from '../../support/service';
import { CheckoutClient, GraphQLClient, type CreatedOrder, type FeeResult, type OrderDetails, type PayResult } from '../../../packages/sdk/src';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
let counter = 0;

/**
 * The numbers a shop plugin sees for one order of 2,500.50 NGN paid by card (fee 1.5 %: 37.51),
 * through the SDK: order/create, order/fee, order/pay, and order/verify after 3-D Secure.
 */
async function payOneOrder(t: TestService, keys: { publicKey: string; privateKey: string; encryptionKey: string }) {
  const client = new CheckoutClient({ baseUrl: t.baseUrl, apiKey: keys.publicKey, encryptionKey: keys.encryptionKey });
  const reference = `FEE-${process.pid}-${Date.now()}-${++counter}`;
  const created = await client.createOrder({
    customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada+fee${counter}@example.test` },
    order: { amount: 2500.5, reference, description: 'Fee bearer', currency: 'NGN' },
    payment: { RedirectUrl: 'https://shop.test/return' },
  });
  const fee = await client.orderFee({ amount: 2500.5, paymentOption: 'C', currency: 'NGN' });
  const paid = await client.payOrder({
    reference,
    paymentOption: 'C',
    country: 'NG',
    card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
  });
  const otp = await fetch(paid.data.paymentDetail.redirectUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'otp=123456',
  });
  expect(otp.status).toBe(303);
  const verified = await client.verifyOrder(reference, { apiKey: keys.privateKey });
  expect(verified.data.status).toBe('Successful');
  return { reference, created: created.data, fee: fee.data, paid: paid.data, verified: verified.data };
}

/** The invariants documented for plugin authors, checked with exact decimals. */
function expectInvariants(amount: string, n: { created: CreatedOrder; fee: FeeResult; paid: PayResult; verified: OrderDetails }): void {
  const d = (x: number) => new Decimal(x);
  const v = n.verified;
  expect(d(v.fee).eq(d(v.subsidiaryFee).plus(v.customerFee))).toBe(true);
  expect(d(v.totalAmountCharged).minus(v.customerFee).eq(amount)).toBe(true);
  expect(d(n.created.order.amount).eq(amount)).toBe(true);
  expect(d(n.created.subsidiaryOrderSummary.totalAmount).eq(v.totalAmountCharged)).toBe(true);
  expect(d(n.fee.totalChargedAmount).eq(d(n.fee.amount).plus(n.fee.customerFee))).toBe(true);
  expect(d(n.paid.orderPayment.totalAmount).eq(v.totalAmountCharged)).toBe(true);
  expect(d(n.paid.orderPayment.fee).eq(v.fee)).toBe(true);
}

describe('the fee bearer', () => {
  // Each merchant:create generates two 4096-bit RSA keys in this process: slow on a loaded machine.
  jest.setTimeout(120_000);
  const env = cliEnvironment('fee-bearer');
  let t: TestService;
  beforeAll(async () => {
    env.apply();
    t = await startTestService();
  });
  afterAll(async () => {
    env.restore();
    await t?.close();
  });

  const feeBearerOf = async (apiKey: string) => (await new GraphQLClient({ baseUrl: t.baseUrl, apiKey }).merchant()).feeBearer;

  it('the CLI sets it at creation and afterwards, per environment; GraphQL reads it', async () => {
    const created = await cli(['merchant:create', '--name', 'Fee Shop', '--country', 'NG', '--email', 'fees@shop.test', '--fee-bearer', 'customer', '--json']);
    expect(created.code).toBe(0);
    const m = JSON.parse(created.out);
    expect(Object.keys(m)).toEqual(['subsidiary', 'webhookSecret', 'liveWebhookSecret', 'keys']); // the documented JSON
    expect(await feeBearerOf(m.keys.test.publicKey)).toBe('CUSTOMER');
    expect(await feeBearerOf(m.keys.live.publicKey)).toBe('CUSTOMER');

    const changed = await cli(['merchant:settings', '--id', String(m.subsidiary.id), '--environment', 'test', '--fee-bearer', 'merchant', '--json']);
    expect(changed.code).toBe(0);
    expect(JSON.parse(changed.out)).toEqual({ subsidiaryId: m.subsidiary.id, test: { feeBearer: 'merchant' }, live: { feeBearer: 'customer' } });
    expect(await feeBearerOf(m.keys.test.publicKey)).toBe('MERCHANT');
    expect(await feeBearerOf(m.keys.live.publicKey)).toBe('CUSTOMER');

    const both = await cli(['merchant:settings', '--id', String(m.subsidiary.id), '--fee-bearer', 'MERCHANT']);
    expect(both).toMatchObject({ code: 0, out: `Merchant ${m.subsidiary.id}: test fee bearer merchant, live fee bearer merchant.\n` });
    expect(await feeBearerOf(m.keys.live.publicKey)).toBe('MERCHANT');

    const shown = await cli(['merchant:settings', '--id', String(m.subsidiary.id), '--json']);
    expect(JSON.parse(shown.out)).toEqual({ subsidiaryId: m.subsidiary.id, test: { feeBearer: 'merchant' }, live: { feeBearer: 'merchant' } });

    const plain = await cli(['merchant:create', '--name', 'Plain Shop', '--country', 'NG', '--email', 'plain@shop.test', '--json']);
    expect(await feeBearerOf(JSON.parse(plain.out).keys.test.publicKey)).toBe('CUSTOMER'); // the default for new merchants
  });

  it('the CLI refuses a bad fee bearer, an unknown merchant and a missing id', async () => {
    const bad = await cli(['merchant:create', '--name', 'X', '--country', 'NG', '--email', 'x@shop.test', '--fee-bearer', 'shop', '--json']);
    expect(bad).toMatchObject({ code: 65, out: '' });
    expect(bad.err).toContain('FeeBearer is currently not supported.');
    const unknown = await cli(['merchant:settings', '--id', '999999999', '--fee-bearer', 'customer']);
    expect(unknown).toMatchObject({ code: 65, out: '' });
    expect(unknown.err).toContain('merchant not found');
    expect((await cli(['merchant:settings', '--fee-bearer', 'customer'])).code).toBe(64);
    expect((await cli(['merchant:settings', '--id', '1', '--environment', 'staging'])).code).toBe(64);
  });

  it('GraphQL sets it at creation (admin) and afterwards (private key), and reads it', async () => {
    const admin = new GraphQLClient({ baseUrl: t.baseUrl, adminToken: TEST_ADMIN_TOKEN });
    const { createMerchant } = await admin.request<{ createMerchant: { keys: { test: { publicKey: string; privateKey: string } } } }, unknown>(
      `mutation ($input: CreateMerchantInput!) { createMerchant(input: $input) { keys { test { publicKey privateKey } } } }`,
      { input: { name: 'GraphQL Shop', country: 'NG', supportEmail: 'gql@shop.test', feeBearer: 'CUSTOMER' } },
    );
    expect(await feeBearerOf(createMerchant.keys.test.publicKey)).toBe('CUSTOMER');
    const owner = new GraphQLClient({ baseUrl: t.baseUrl, apiKey: createMerchant.keys.test.privateKey });
    expect(await owner.updateMerchantSettings({ feeBearer: 'MERCHANT' })).toEqual({ feeBearer: 'MERCHANT' });
    expect(await feeBearerOf(createMerchant.keys.test.publicKey)).toBe('MERCHANT');
    const quote = await owner.feeQuote({ amount: '2500.50', paymentOption: 'C' });
    expect(quote).toMatchObject({
      amount: '2500.50',
      fee: '37.51',
      subsidiaryFee: '37.51',
      customerFee: '0.00',
      totalChargedAmount: '2500.50',
      bearer: 'merchant',
    });
  });

  it('merchant bears the fee: the customer pays the amount, the fee comes out of it', async () => {
    const created = await cli([
      'merchant:create',
      '--name',
      'Merchant Pays',
      '--country',
      'NG',
      '--email',
      'mp@shop.test',
      '--fee-bearer',
      'merchant',
      '--json',
    ]);
    const m = JSON.parse(created.out);
    const n = await payOneOrder(t, m.keys.test);
    expect(n.created.order).toMatchObject({ amount: 2500.5, fee: 37.51 });
    expect(n.created.subsidiaryOrderSummary.totalAmount).toBe(2500.5);
    expect(n.fee).toEqual({ fee: 37.51, amount: 2500.5, subsidiaryFee: 37.51, customerFee: 0, totalChargedAmount: 2500.5, paymentOption: 'C' });
    expect(n.paid.orderPayment).toMatchObject({ totalAmount: 2500.5, fee: 37.51 });
    expect(n.verified).toMatchObject({ totalAmountCharged: 2500.5, fee: 37.51, subsidiaryFee: 37.51, customerFee: 0 });
    expectInvariants('2500.50', n);
    // The plugin's check `totalAmountCharged - fee == amount` does NOT hold in this mode.
    expect(new Decimal(n.verified.totalAmountCharged).minus(n.verified.fee).eq('2500.50')).toBe(false);
  });

  it('customer bears the fee: the customer pays amount + fee, the merchant gets the amount', async () => {
    const created = await cli([
      'merchant:create',
      '--name',
      'Customer Pays',
      '--country',
      'NG',
      '--email',
      'cp@shop.test',
      '--fee-bearer',
      'customer',
      '--json',
    ]);
    const m = JSON.parse(created.out);
    const n = await payOneOrder(t, m.keys.test);
    expect(n.created.order).toMatchObject({ amount: 2500.5, fee: 37.51 });
    expect(n.created.subsidiaryOrderSummary.totalAmount).toBe(2538.01);
    expect(n.fee).toEqual({ fee: 37.51, amount: 2500.5, subsidiaryFee: 0, customerFee: 37.51, totalChargedAmount: 2538.01, paymentOption: 'C' });
    expect(n.paid.orderPayment).toMatchObject({ totalAmount: 2538.01, fee: 37.51 });
    expect(n.verified).toMatchObject({ totalAmountCharged: 2538.01, fee: 37.51, subsidiaryFee: 0, customerFee: 37.51 });
    expectInvariants('2500.50', n);
    expect(new Decimal(n.verified.totalAmountCharged).minus(n.verified.fee).eq('2500.50')).toBe(true);
  });

  it('an order keeps the split it was created with when the setting changes before payment', async () => {
    const created = await cli(['merchant:create', '--name', 'Switcher', '--country', 'NG', '--email', 'sw@shop.test', '--fee-bearer', 'customer', '--json']);
    const m = JSON.parse(created.out);
    const client = new CheckoutClient({ baseUrl: t.baseUrl, apiKey: m.keys.test.publicKey, encryptionKey: m.keys.test.encryptionKey });
    const reference = `FEE-SW-${process.pid}-${Date.now()}`;
    await client.createOrder({
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'sw@example.test' },
      order: { amount: 1000, reference, description: 'Switch', currency: 'NGN' },
      payment: { RedirectUrl: 'https://shop.test/return' },
    });
    expect((await cli(['merchant:settings', '--id', String(m.subsidiary.id), '--fee-bearer', 'merchant'])).code).toBe(0);
    const verified = await client.verifyOrder(reference, { apiKey: m.keys.test.privateKey });
    expect(verified.data).toMatchObject({ totalAmountCharged: 1015, fee: 15, subsidiaryFee: 0, customerFee: 15 });
    expect((await client.orderFee({ amount: 1000, paymentOption: 'C' })).data).toMatchObject({ customerFee: 0, totalChargedAmount: 1000 });
  });
});
