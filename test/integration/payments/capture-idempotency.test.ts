import { startTestService, type TestService } from '../../support/service';
import { graphql, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { encryptPayload } from '../../support/payload-client';
import { createScratchDatabase } from '../../support/scratch-database';
import { captureWithLostAnswer } from '../../support/lost-capture';
import { changeBeforeClaim } from '../../support/authorization-hooks';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { SandboxProcessor } from '../../../src/payments/sandbox/sandbox.processor';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const customer = { firstname: 'Ada', lastname: 'Obi', email: 'ada@example.test', mobile: '+2348012345678', country: 'NG' };
const card = { card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing } };

const CREATE_LINK = `mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { reference } }`;
const ORDER_FIELDS = `orderReference statusId status amount amountAuthorized totalAmountCharged fee customerFee orderPayments { statusId status }`;
const ORDER = `query ($reference: String!) { order(reference: $reference) { ${ORDER_FIELDS} } }`;
const CAPTURE = `mutation ($input: CaptureOrderInput!) { captureOrder(input: $input) { ${ORDER_FIELDS} } }`;
const VOID = `mutation ($input: VoidOrderInput!) { voidOrder(input: $input) { ${ORDER_FIELDS} } }`;
const REFUND = `mutation ($input: RefundOrderInput!) { refundOrder(input: $input) { status } }`;

type Sandbox = SandboxProcessor & Record<'capture' | 'voidAuthorization', (request: { idempotencyKey: string }) => Promise<unknown>>;

/**
 * The merchant's idempotencyKey of captureOrder and voidOrder. On a database of this file's own,
 * with the sandbox's capture and void calls counted (each call still goes to the sandbox).
 */
describe('capture and void idempotency keys', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let t: TestService;
  let m: CreatedMerchant;
  let other: CreatedMerchant;
  /** The processor keys of every capture and void call the sandbox received, in order. */
  const calls: Array<{ kind: 'capture' | 'void'; key: string }> = [];
  beforeAll(async () => {
    scratch = await createScratchDatabase('captureidem');
    t = await startTestService({ DATABASE_URL: scratch.url, RATE_LIMIT: 'off' });
    m = await createTestMerchant(t, { name: 'Lekki Outfitters', feeBearer: 'customer' });
    other = await createTestMerchant(t, { name: 'Ikoyi Tents' });
    const sandbox = (t.service.runtime.ctx.services.payments as unknown as { processors: { test: Sandbox } }).processors.test;
    const capture = sandbox.capture.bind(sandbox);
    const release = sandbox.voidAuthorization.bind(sandbox);
    sandbox.capture = (req) => (calls.push({ kind: 'capture', key: req.idempotencyKey }), capture(req as never));
    sandbox.voidAuthorization = (req) => (calls.push({ kind: 'void', key: req.idempotencyKey }), release(req as never));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  });

  const gql = async (query: string, variables: Record<string, unknown>, merchant = m) =>
    (await graphql(t.baseUrl, query, variables, { 'api-key': merchant.keys.test.privateKey })).body;
  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  const callsOf = (reference: string, orderId: number) => calls.filter((c) => c.key.split(':')[1] === String(orderId)).map((c) => `${c.kind} ${reference}`);
  const orderId = async (reference: string) => ((await sql(`select id from checkout_order where reference = ?`, [reference])) as Array<{ id: number }>)[0]!.id;
  const notifyTypes = async (reference: string) =>
    (
      (await sql(`select e.notify_type from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? order by e.sequence`, [
        reference,
      ])) as Array<{
        notify_type: string;
      }>
    ).map((r) => r.notify_type);

  /** A customer pays a MANUAL link with a sandbox card: the Authorized order's reference. */
  async function authorizedOrder(merchant = m): Promise<string> {
    const link = await gql(
      CREATE_LINK,
      {
        input: {
          name: 'Tent',
          description: 'Four-person tent',
          paymentType: 'MC',
          currency: 'NGN',
          authOption: 'NOAUTH',
          amount: '1000',
          captureMethod: 'MANUAL',
        },
      },
      merchant,
    );
    const res = await request(t.baseUrl, 'POST', `/pay/${link.data.createPaymentLink.reference}`, {
      body: { paymentOption: 'C', customer, data: encryptPayload(card, merchant.keys.test.encryptionKey) },
    });
    expect(res.status).toBe(200);
    return new URL(res.body.redirectUrl).searchParams.get('reference')!;
  }

  it('answers a capture retried with its idempotencyKey with the order as first captured, and the processor is asked to capture once', async () => {
    const reference = await authorizedOrder();
    const first = await gql(CAPTURE, { input: { reference, amount: '600.00', idempotencyKey: 'cap-1' } });
    expect(first.errors).toBeUndefined();
    expect(first.data.captureOrder).toMatchObject({ statusId: 5, status: 'Successful', amount: '600.00', totalAmountCharged: '609.00' });
    // The same amount written otherwise is the same request.
    const again = await gql(CAPTURE, { input: { reference, amount: '600', idempotencyKey: 'cap-1' } });
    expect(again.errors).toBeUndefined();
    expect(again.data.captureOrder).toEqual(first.data.captureOrder);
    expect(callsOf(reference, await orderId(reference))).toEqual([`capture ${reference}`]);
    expect(await notifyTypes(reference)).toEqual(['authorized', 'successful']);
    // Without the key, a second capture is still refused: the key is what tells "my capture" apart.
    expect((await gql(CAPTURE, { input: { reference, amount: '600.00' } })).errors[0].extensions.code).toBe('CAPTURE_NOT_ALLOWED');
    expect((await gql(CAPTURE, { input: { reference, amount: '600.00', idempotencyKey: 'cap-1-other' } })).errors[0].extensions.code).toBe(
      'CAPTURE_NOT_ALLOWED',
    );
  });

  it('refuses a key reused with another amount, a missing amount, another order or for a void with IDEMPOTENCY_KEY_REUSED, changing nothing', async () => {
    const reference = await authorizedOrder();
    const otherOrder = await authorizedOrder();
    expect((await gql(CAPTURE, { input: { reference, amount: '600.00', idempotencyKey: 'cap-2' } })).errors).toBeUndefined();
    for (const res of [
      await gql(CAPTURE, { input: { reference, amount: '500.00', idempotencyKey: 'cap-2' } }),
      await gql(CAPTURE, { input: { reference, idempotencyKey: 'cap-2' } }),
      await gql(CAPTURE, { input: { reference: otherOrder, amount: '600.00', idempotencyKey: 'cap-2' } }),
      await gql(VOID, { input: { reference: otherOrder, idempotencyKey: 'cap-2' } }),
    ]) {
      expect(res.errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    }
    expect((await gql(ORDER, { reference })).data.order).toMatchObject({ statusId: 5, amount: '600.00' });
    expect((await gql(ORDER, { reference: otherOrder })).data.order).toMatchObject({ statusId: 6 });
    expect(callsOf(otherOrder, await orderId(otherOrder))).toEqual([]);
  });

  it('makes one processor capture of concurrent captures with one key, and answers each of them the captured order', async () => {
    const reference = await authorizedOrder();
    const answers = await Promise.all([1, 2, 3].map(() => gql(CAPTURE, { input: { reference, amount: '250.00', idempotencyKey: 'cap-concurrent' } })));
    for (const answer of answers) {
      expect(answer.errors).toBeUndefined();
      expect(answer.data.captureOrder).toMatchObject({ statusId: 5, amount: '250.00' });
    }
    expect(callsOf(reference, await orderId(reference))).toEqual([`capture ${reference}`]);
    expect(await notifyTypes(reference)).toEqual(['authorized', 'successful']);
    expect(await sql(`select count(*)::int as n from authorization_action where order_id = ?`, [await orderId(reference)])).toEqual([{ n: 1 }]);
  });

  it('answers a void retried with its key with the voided order, voids once for concurrent voids of one key, and refuses the key for a capture', async () => {
    const reference = await authorizedOrder();
    const answers = await Promise.all([1, 2].map(() => gql(VOID, { input: { reference, idempotencyKey: 'void-1' } })));
    for (const answer of answers) expect(answer.data.voidOrder).toMatchObject({ statusId: 7, status: 'Voided' });
    const retried = await gql(VOID, { input: { reference, idempotencyKey: 'void-1' } });
    expect(retried.data.voidOrder).toEqual(answers[0].data.voidOrder);
    expect(callsOf(reference, await orderId(reference))).toEqual([`void ${reference}`]);
    expect(await notifyTypes(reference)).toEqual(['authorized', 'voided']);
    expect((await gql(CAPTURE, { input: { reference, idempotencyKey: 'void-1' } })).errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  const environmentOf = async (reference: string) =>
    ((await sql(`select environment_id from checkout_order where reference = ?`, [reference])) as Array<{ environment_id: number }>)[0]!.environment_id;

  it('refuses with IDEMPOTENCY_KEY_REUSED a keyed capture whose key another process used for another order between its read and its claim, calling nothing', async () => {
    const [mine, theirs] = [await authorizedOrder(), await authorizedOrder()];
    const [mineId, theirsId, environment] = [await orderId(mine), await orderId(theirs), await environmentOf(mine)];
    const raced = changeBeforeClaim(() =>
      sql(
        `insert into authorization_action (order_id, environment_id, merchant_key, kind, actor, idempotency_key, state) values (?, ?, 'raced-1', 'void', 'void', ?, 'failed')`,
        [theirsId, environment, `void:${theirsId}:raced`],
      ),
    );
    const res = await gql(CAPTURE, { input: { reference: mine, idempotencyKey: 'raced-1' } });
    expect(raced()).toBe(true);
    expect(res.errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(callsOf(mine, mineId)).toEqual([]);
    expect((await gql(ORDER, { reference: mine })).data.order.statusId).toBe(6);
  });

  it('answers a keyed void with the voided order when another process voided it with that key between its read and its claim, calling nothing', async () => {
    const reference = await authorizedOrder();
    const [id, environment] = [await orderId(reference), await environmentOf(reference)];
    const raced = changeBeforeClaim(async () => {
      await sql(
        `insert into authorization_action (order_id, environment_id, merchant_key, kind, actor, idempotency_key, state) values (?, ?, 'raced-2', 'void', 'void', ?, 'succeeded')`,
        [id, environment, `void:${id}:raced`],
      );
      await sql(`update checkout_order set status_id = 7 where id = ?`, [id]);
      await sql(`update order_payment set status_id = 7 where order_id = ?`, [id]);
    });
    const res = await gql(VOID, { input: { reference, idempotencyKey: 'raced-2' } });
    expect(raced()).toBe(true);
    expect(res.errors).toBeUndefined();
    expect(res.data.voidOrder.statusId).toBe(7);
    expect(callsOf(reference, id)).toEqual([]);
  });

  it('lets one of two captures, a partial capture and two voids (one keyed) asked at once reach the processor, refusing the rest, order after order', async () => {
    for (let i = 0; i < 8; i++) {
      const reference = await authorizedOrder();
      const id = await orderId(reference);
      const answers = await Promise.all([
        gql(CAPTURE, { input: { reference } }),
        gql(CAPTURE, { input: { reference, amount: '400' } }),
        gql(VOID, { input: { reference } }),
        gql(VOID, { input: { reference, idempotencyKey: `at-once-${i}` } }),
      ]);
      expect(answers.filter((a) => !a.errors)).toHaveLength(1);
      for (const a of answers.filter((x) => x.errors)) expect(['CAPTURE_NOT_ALLOWED', 'VOID_NOT_ALLOWED']).toContain(a.errors[0].extensions.code);
      expect(callsOf(reference, id)).toHaveLength(1);
    }
  });

  it('scopes keys to the merchant environment: another merchant captures its own order with the same key', async () => {
    const mine = await authorizedOrder();
    const theirs = await authorizedOrder(other);
    expect((await gql(CAPTURE, { input: { reference: mine, idempotencyKey: 'shared-key' } })).errors).toBeUndefined();
    const res = await gql(CAPTURE, { input: { reference: theirs, idempotencyKey: 'shared-key' } }, other);
    expect(res.errors).toBeUndefined();
    expect(res.data.captureOrder).toMatchObject({ orderReference: theirs, statusId: 5 });
  });

  it('settles a keyed capture whose processor answer was lost from the processor record when the key is retried, capturing nothing more', async () => {
    const reference = await authorizedOrder();
    const [order] = await sql(
      `select o.id, o.environment_id, p.processor_token from checkout_order o join order_payment p on p.order_id = o.id where o.reference = ?`,
      [reference],
    );
    // The capture of key "cap-lost" was recorded and reached the processor; its answer never came back.
    await captureWithLostAnswer(t, { id: order.id, processorToken: order.processor_token, environmentId: order.environment_id }, { merchantKey: 'cap-lost' });
    const retried = await gql(CAPTURE, { input: { reference, amount: '500.00', idempotencyKey: 'cap-lost' } });
    expect(retried.errors).toBeUndefined();
    expect(retried.data.captureOrder).toMatchObject({ statusId: 5, amount: '500.00', totalAmountCharged: '507.50' });
    // The engine asked the processor no second capture: the retry read the record of the first.
    expect(callsOf(reference, order.id)).toEqual([]);
    expect(await notifyTypes(reference)).toEqual(['authorized', 'successful']);
  });

  it('refuses a keyed retry as in progress while the processor has no record of the pending call', async () => {
    const reference = await authorizedOrder();
    const [order] = await sql(`select id, environment_id from checkout_order where reference = ?`, [reference]);
    await sql(
      `insert into authorization_action (order_id, environment_id, merchant_key, kind, actor, idempotency_key) values (?, ?, 'void-pending', 'void', 'void', ?)`,
      [order.id, order.environment_id, `void:${order.id}:pending`],
    );
    const res = await gql(VOID, { input: { reference, idempotencyKey: 'void-pending' } });
    expect(res.errors[0].extensions.code).toBe('VOID_NOT_ALLOWED');
    expect(res.errors[0].message).toContain('still in progress');
    expect(callsOf(reference, order.id)).toEqual([]);
    expect((await gql(ORDER, { reference })).data.order.statusId).toBe(6);
  });

  it.each([
    ['empty', ''],
    ['with a space', 'has space'],
    ['of 256 characters', 'x'.repeat(256)],
    ['with a non-ASCII character', 'clé'],
  ])('refuses a key %s with the same message as a refund key, capturing and voiding nothing', async (_label, key) => {
    const reference = await authorizedOrder();
    const capture = await gql(CAPTURE, { input: { reference, idempotencyKey: key } });
    const refund = await gql(REFUND, { input: { reference, idempotencyKey: key } });
    expect(capture.errors[0].message).toBe('The idempotencyKey must be 1 to 255 visible ASCII characters.');
    expect(capture.errors[0].message).toBe(refund.errors[0].message);
    expect((await gql(VOID, { input: { reference, idempotencyKey: key } })).errors[0].message).toBe(capture.errors[0].message);
    expect((await gql(ORDER, { reference })).data.order.statusId).toBe(6);
  });
});
