import { Client } from 'pg';
import { startTestService, type TestService } from '../../support/service';
import { graphql, postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { encryptPayload } from '../../support/payload-client';
import { createScratchDatabase } from '../../support/scratch-database';
import { captureWithLostAnswer } from '../../support/lost-capture';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { ManualClock } from '../../../src/shared/clock';
import { SandboxProcessor } from '../../../src/payments/sandbox/sandbox.processor';
import { AuthorizationQueries } from '../../../src/payments/authorization.queries';
import { changeBefore, changeBeforeClaim } from '../../support/authorization-hooks';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const customer = { firstname: 'Ada', lastname: 'Obi', email: 'ada@example.test', mobile: '+2348012345678', country: 'NG' };
const card = (cardNumber = '5123450000000008') => ({ card: { cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing } });

const CREATE_LINK = `mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id reference paymentLinkUrl captureMethod } }`;
const ORDER_FIELDS = `orderReference statusId status amount amountAuthorized totalAmountCharged fee customerFee captureMethod paymentResponseCode
  orderPayments { statusId status }`;
const ORDER = `query ($reference: String!) { order(reference: $reference) { ${ORDER_FIELDS} } }`;
const CAPTURE = `mutation ($input: CaptureOrderInput!) { captureOrder(input: $input) { ${ORDER_FIELDS} } }`;
const VOID = `mutation ($input: VoidOrderInput!) { voidOrder(input: $input) { ${ORDER_FIELDS} } }`;
const TIMELINE = `query ($reference: String!) { orderTimeline(reference: $reference) { event } }`;

/**
 * Capture later: orders of a MANUAL payment link are held (Authorized), then captured or voided.
 * On a database of this file's own: the authorization expiry sweep acts on every order it finds.
 */
describe('capture later: authorize, capture and void', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let t: TestService;
  let m: CreatedMerchant;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    scratch = await createScratchDatabase('capture');
    // Many card attempts from one address on link pages: no per-IP card limit here.
    t = await startTestService({ DATABASE_URL: scratch.url, AUTHORIZATION_TTL_HOURS: '24', RATE_LIMIT: 'off' }, { clock });
    // The customer bears the fee: a capture's total is the amount captured plus the fee on it.
    m = await createTestMerchant(t, { name: 'Lekki Outfitters', feeBearer: 'customer' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  });

  const k = () => m.keys.test;
  const gql = async (query: string, variables: Record<string, unknown>, apiKey = k().privateKey) =>
    (await graphql(t.baseUrl, query, variables, { 'api-key': apiKey })).body;
  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  type EventRow = { notify_type: string; payload: { notify: string; notifyType: string; data: { statusId: number; status: string } } };
  const events = async (reference: string) =>
    (
      (await sql(`select e.notify_type, e.payload from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? order by e.sequence`, [
        reference,
      ])) as EventRow[]
    ).map((r) => ({
      // The stored kind and the body's notifyType are one and the same.
      notifyType: r.notify_type === r.payload.notifyType ? r.notify_type : `${r.notify_type} ≠ ${r.payload.notifyType}`,
      notify: r.payload.notify,
      statusId: r.payload.data.statusId,
      status: r.payload.data.status,
    }));

  async function manualLink(authOption: 'AUTH' | 'NOAUTH' = 'NOAUTH', amount = '1000') {
    const res = await gql(CREATE_LINK, {
      input: { name: 'Tent', description: 'Four-person tent', paymentType: 'MC', currency: 'NGN', authOption, amount, captureMethod: 'MANUAL' },
    });
    expect(res.errors).toBeUndefined();
    expect(res.data.createPaymentLink.captureMethod).toBe('MANUAL');
    return res.data.createPaymentLink as { id: number; reference: string; paymentLinkUrl: string };
  }

  /** A customer pays a MANUAL link's hosted page with a sandbox card (no 3-D Secure): the order's reference and where the customer lands. */
  async function authorizedOrder(amount = '1000'): Promise<{ reference: string; landed: URL; link: { id: number; reference: string } }> {
    const link = await manualLink('NOAUTH', amount);
    const res = await request(t.baseUrl, 'POST', `/pay/${link.reference}`, {
      body: { paymentOption: 'C', customer, data: encryptPayload(card(), k().encryptionKey) },
    });
    expect(res.status).toBe(200);
    const landed = new URL(res.body.redirectUrl);
    return { reference: landed.searchParams.get('reference')!, landed, link };
  }

  const restStatus = async (reference: string) =>
    (await postEncrypted(t.baseUrl, '/checkout/order/status', k().publicKey, k().encryptionKey, { reference })).body;
  const restVerify = async (reference: string) =>
    (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body;

  it('leaves an approved payment of a MANUAL link Authorized, holds the money, and announces it with a webhook "authorized"', async () => {
    const { reference, landed } = await authorizedOrder();
    expect(landed.searchParams.get('status')).toBe('authorized');
    const order = (await gql(ORDER, { reference })).data.order;
    expect(order).toMatchObject({
      statusId: 6,
      status: 'Authorized',
      captureMethod: 'MANUAL',
      amount: '1000.00',
      amountAuthorized: '1000.00',
      totalAmountCharged: '1015.00',
      orderPayments: [{ statusId: 6, status: 'Authorized' }],
    });
    expect(await events(reference)).toEqual([{ notify: 'transaction', notifyType: 'authorized', statusId: 6, status: 'Authorized' }]);
    // Held, not taken: the money is not counted as a successful payment.
    const [held] = await sql(`select date_payment_confirmed, authorized_at from checkout_order where reference = ?`, [reference]);
    expect(held.date_payment_confirmed).toBeNull();
    expect(held.authorized_at).not.toBeNull();
    expect((await gql(TIMELINE, { reference })).data.orderTimeline.map((e: { event: string }) => e.event)).toContain('order.authorized');
    // The order lists know the status: filtered by it, with the same fields the order shows.
    const listed = await gql(
      `query { orders(first: 50, filter: { statusIds: [6] }) { edges { node { orderReference status captureMethod amountAuthorized } } } }`,
      {},
    );
    expect(listed.data.orders.edges.map((e: { node: unknown }) => e.node)).toContainEqual({
      orderReference: reference,
      status: 'Authorized',
      captureMethod: 'MANUAL',
      amountAuthorized: '1000.00',
    });
  });

  it('captures part of an authorization: the fee is computed on the amount captured and the order becomes Successful, once', async () => {
    const { reference } = await authorizedOrder();
    const res = await gql(CAPTURE, { input: { reference, amount: '600.00' } });
    expect(res.errors).toBeUndefined();
    // 1.5% of 600 (the default card fee), borne by the customer.
    expect(res.data.captureOrder).toMatchObject({
      statusId: 5,
      status: 'Successful',
      amount: '600.00',
      amountAuthorized: '1000.00',
      fee: '9.00',
      customerFee: '9.00',
      totalAmountCharged: '609.00',
      orderPayments: [{ statusId: 5, status: 'Successful' }],
    });
    // The answer is the order as order(reference) shows it.
    expect((await gql(ORDER, { reference })).data.order).toEqual(res.data.captureOrder);
    expect((await restVerify(reference)).data).toMatchObject({ statusId: 5, status: 'Successful', totalAmountCharged: 609, fee: 9, customerFee: 9 });
    expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'successful']);

    const again = await gql(CAPTURE, { input: { reference, amount: '100' } });
    expect(again.errors[0].extensions.code).toBe('CAPTURE_NOT_ALLOWED');
    const all = await gql(CAPTURE, { input: { reference } });
    expect(all.errors[0].extensions.code).toBe('CAPTURE_NOT_ALLOWED');
    expect((await gql(ORDER, { reference })).data.order.totalAmountCharged).toBe('609.00');
    expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'successful']);

    const audit = await sql(`select action, target, actor_type from audit_entry where subsidiary_id = ? and action = 'order.captured'`, [m.subsidiary.id]);
    expect(audit).toContainEqual({ action: 'order.captured', target: `order ${reference} 600.00 NGN`, actor_type: 'API_KEY' });
    expect((await gql(TIMELINE, { reference })).data.orderTimeline.map((e: { event: string }) => e.event)).toEqual(
      expect.arrayContaining(['order.authorized', 'order.captured']),
    );
  });

  it('refunds a captured order up to the amount captured plus its fee, and refuses refunds of held or released money', async () => {
    const REFUND = `mutation ($input: RefundOrderInput!) { refundOrder(input: $input) { amount status } }`;
    const held = await authorizedOrder();
    const refundHeld = await gql(REFUND, { input: { reference: held.reference, amount: '10' } });
    expect(refundHeld.errors[0].extensions.code).toBe('REFUND_NOT_ALLOWED');

    const captured = await gql(CAPTURE, { input: { reference: held.reference, amount: '600.00' } });
    expect(captured.data.captureOrder.totalAmountCharged).toBe('609.00');
    // The balance is what was taken (609.00), not what was held (1,000 plus its fee).
    const tooMuch = await gql(REFUND, { input: { reference: held.reference, amount: '609.01' } });
    expect(tooMuch.errors[0].extensions.code).toBe('REFUND_AMOUNT_INVALID');
    const all = await gql(REFUND, { input: { reference: held.reference } });
    expect(all.errors).toBeUndefined();
    expect(all.data.refundOrder).toEqual({ amount: '609.00', status: 'SUCCEEDED' });

    const released = await authorizedOrder();
    expect((await gql(VOID, { input: { reference: released.reference } })).errors).toBeUndefined();
    const refundVoided = await gql(REFUND, { input: { reference: released.reference } });
    expect(refundVoided.errors[0].extensions.code).toBe('REFUND_NOT_ALLOWED');
  });

  it("pays a MANUAL link without waiting on its link type's row, which every merchant's links of that type share", async () => {
    // Another session holds the row of the type (multi charge) of every merchant's MC links (as a
    // change of that row would; new links still refer to it: foreign keys take only KEY SHARE).
    const holder = new Client({ connectionString: scratch.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from payment_link_type where code = 'MC' for no key update`);
      const paying = authorizedOrder();
      let paid = false;
      // Either the pay ends, or one of the service's sessions is seen waiting for a lock.
      const outcome = await Promise.race([
        paying.then(() => {
          paid = true;
          return 'paid';
        }),
        (async () => {
          while (!paid) {
            const { rows } = await holder.query(
              `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
            );
            if (rows[0].n > 0) return 'waiting for a lock';
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          return 'paid';
        })(),
      ]);
      await holder.query('rollback');
      await paying;
      expect(outcome).toBe('paid');
    } finally {
      await holder.end();
    }
  });

  /**
   * Runs `change` once, right before the settlement's write that starts from the claim's rows (no
   * lock held then: the claim has committed, the processor has answered), so the interleaving is exact.
   */
  const changeBeforeGuardedSettlement = (change: () => Promise<unknown>) => changeBefore('writeSettlement', change, (args) => args[2] !== undefined);
  const actionStates = async (reference: string) =>
    (await sql(`select a.kind, a.state from authorization_action a join checkout_order o on o.id = a.order_id where o.reference = ? order by a.id`, [
      reference,
    ])) as {
      kind: string;
      state: string;
    }[];

  const guardConflicts = () => {
    const seen: string[] = [];
    const stop = t.service.runtime.ctx.services.payments.onGuardConflict((step) => seen.push(step));
    return { seen, stop };
  };

  /** Waits until a statement whose text begins as `like` waits for a lock (its text is longer than pg_stat_activity keeps). */
  const waitForLockWait = async (like: string) => {
    for (let i = 0; i < 300; i++) {
      const [waiting] = await sql(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like ?`, [like]);
      if (waiting.n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no statement like ${like} waited for a lock`);
  };

  it('settles a capture under locks when the payment changed after the claim read it (the customer went back to the shop meanwhile): once, with its change kept', async () => {
    const { reference } = await authorizedOrder();
    const conflicts = guardConflicts();
    const changed = changeBeforeGuardedSettlement(() =>
      sql(`update order_payment set returned_to_merchant_at = now() where order_id = (select id from checkout_order where reference = ?)`, [reference]),
    );
    const res = await gql(CAPTURE, { input: { reference, amount: '600.00' } });
    expect(changed()).toBe(true);
    conflicts.stop();
    expect(res.errors).toBeUndefined();
    expect(res.data.captureOrder).toMatchObject({ statusId: 5, amount: '600.00', totalAmountCharged: '609.00', orderPayments: [{ statusId: 5 }] });
    expect((await gql(ORDER, { reference })).data.order).toEqual(res.data.captureOrder);
    expect(conflicts.seen).toEqual(['capture_void']);
    expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'successful']);
    expect(await sql(`select a.state from authorization_action a join checkout_order o on o.id = a.order_id where o.reference = ?`, [reference])).toEqual([
      { state: 'succeeded' },
    ]);
    const [payment] = await sql(`select p.returned_to_merchant_at from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ?`, [
      reference,
    ]);
    expect(payment.returned_to_merchant_at).not.toBeNull();
  });

  // The claim decided again under the lock reads the order afresh: its settlement then writes from those rows with no second conflict.
  it.each([
    ["its settlement from the claim's rows, which then runs", () => changeBeforeGuardedSettlement, 'capture_void'],
    ['its claim from the rows read without locks, which then runs', () => changeBeforeClaim, 'capture_void_claim'],
  ])('voids an order whose row changed before %s under locks, even by a write that keeps its version, and keeps that change', async (_, hook, step) => {
    const { reference } = await authorizedOrder();
    const conflicts = guardConflicts();
    const changed = hook()(() => sql(`update checkout_order set remarks = 'noted by support' where reference = ?`, [reference]));
    const res = await gql(VOID, { input: { reference } });
    expect(changed()).toBe(true);
    conflicts.stop();
    expect(res.errors).toBeUndefined();
    expect(res.data.voidOrder.statusId).toBe(7);
    expect(conflicts.seen).toEqual([step]);
    expect(await actionStates(reference)).toEqual([{ kind: 'void', state: 'succeeded' }]);
    expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'voided']);
    expect(await sql(`select remarks from checkout_order where reference = ?`, [reference])).toEqual([{ remarks: 'noted by support' }]);
  });

  it("shows the link as it is when the capture is written, in the webhook and the answer, when the merchant disabled it during the processor's call", async () => {
    const { reference, link } = await authorizedOrder();
    const WITH_LINK = `orderReference statusId productName paymentLink { isActive name }`;
    const changed = changeBeforeGuardedSettlement(async () => {
      expect((await gql(`mutation ($id: Int!) { deactivatePaymentLink(id: $id) { isActive } }`, { id: Number(link.id) })).errors).toBeUndefined();
      await sql(`update payment_link set name = 'Tent (sold out)' where id = ?`, [link.id]);
    });
    const res = await gql(`mutation ($input: CaptureOrderInput!) { captureOrder(input: $input) { ${WITH_LINK} } }`, { input: { reference } });
    expect(changed()).toBe(true);
    expect(res.errors).toBeUndefined();
    const now = (await gql(`query ($reference: String!) { order(reference: $reference) { ${WITH_LINK} } }`, { reference })).data.order;
    expect(now).toMatchObject({ statusId: 5, productName: 'Tent (sold out)', paymentLink: { isActive: false, name: 'Tent (sold out)' } });
    expect(res.data.captureOrder).toEqual(now);
    const [event] = await sql(
      `select e.payload from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? and e.notify_type = 'successful'`,
      [reference],
    );
    expect({ productName: event.payload.data.productName, isActive: event.payload.data.paymentLink.isActive }).toEqual({
      productName: 'Tent (sold out)',
      isActive: false,
    });
  });

  it("takes the order's lock before the action's when writing a refused void from the claim's rows, as every settlement does: no deadlock with a settlement holding the order", async () => {
    const { reference } = await authorizedOrder();
    const [{ id: orderId }] = await sql(`select id from checkout_order where reference = ?`, [reference]);
    const declined = { kind: 'declined', token: null, issuer: 'Sandbox', code: '05', message: 'Do not honour' } as const;
    const sandbox = (t.service.runtime.ctx.services.payments as unknown as { processors: { test: SandboxProcessor } }).processors.test;
    const refusing = jest.spyOn(sandbox, 'voidAuthorization').mockResolvedValue(declined as never);
    const holder = new Client({ connectionString: scratch.url });
    await holder.connect();
    const conflicts = guardConflicts();
    const original = AuthorizationQueries.prototype.writeSettlement;
    let seen: { holderGotAction: string; deadlock: boolean } | null = null;
    const spy = jest.spyOn(AuthorizationQueries.prototype, 'writeSettlement').mockImplementation(async function (this: AuthorizationQueries, ...args) {
      if (args[2] === undefined || seen) return original.apply(this, args);
      // A locked settlement of the same action has taken the order, its first lock ...
      await holder.query('begin');
      await holder.query(`select id from checkout_order where id = $1 for update`, [orderId]);
      let deadlock = false;
      const writing = original.apply(this, args).catch((err: { code?: string }) => {
        deadlock = err.code === '40P01';
        throw err;
      });
      await waitForLockWait(`with g as%`);
      // ... and now asks for the action: the write from the claim must not be holding it.
      const holderGotAction = await holder.query(`select id from authorization_action where id = $1 for update`, [args[1].action.id]).then(
        () => 'got the action',
        (err: { code?: string }) => String(err.code),
      );
      await holder.query('rollback');
      const written = await writing.catch(() => false);
      seen = { holderGotAction, deadlock };
      return written;
    });
    try {
      const res = await gql(VOID, { input: { reference } });
      expect(res.errors[0].extensions.code).toBe('VOID_NOT_ALLOWED');
      expect(seen).toEqual({ holderGotAction: 'got the action', deadlock: false });
      expect(conflicts.seen).toEqual([]);
      expect(await sql(`select state from authorization_action where order_id = ?`, [orderId])).toEqual([{ state: 'failed' }]);
      expect((await gql(ORDER, { reference })).data.order.statusId).toBe(6);
    } finally {
      spy.mockRestore();
      refusing.mockRestore();
      conflicts.stop();
      await holder.end();
    }
  });

  it('settles a capture under locks when an update of the order committed while its write waited for the order, and shows that update', async () => {
    const { reference } = await authorizedOrder();
    const [{ id: orderId }] = await sql(`select id from checkout_order where reference = ?`, [reference]);
    const holder = new Client({ connectionString: scratch.url });
    await holder.connect();
    const original = AuthorizationQueries.prototype.writeSettlement;
    let done = false;
    const spy = jest.spyOn(AuthorizationQueries.prototype, 'writeSettlement').mockImplementation(async function (this: AuthorizationQueries, ...args) {
      if (args[2] === undefined || done) return original.apply(this, args);
      done = true;
      await holder.query('begin');
      await holder.query(`update checkout_order set remarks = 'support note' where id = $1`, [orderId]);
      const writing = original.apply(this, args);
      await waitForLockWait(`with g as%`);
      await holder.query('commit');
      return writing;
    });
    try {
      const res = await gql(`mutation ($input: CaptureOrderInput!) { captureOrder(input: $input) { statusId remarks } }`, { input: { reference } });
      expect(res.errors).toBeUndefined();
      expect(res.data.captureOrder).toEqual({ statusId: 5, remarks: 'support note' });
      const [event] = await sql(
        `select e.payload from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? and e.notify_type = 'successful'`,
        [reference],
      );
      expect(event.payload.data.remarks).toBe('support note');
      expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'successful']);
    } finally {
      spy.mockRestore();
      await holder.end();
    }
  });

  it('settles a capture from the rows its claim read, with no read and no lock, when nothing changed in between', async () => {
    const { reference } = await authorizedOrder();
    const conflicts = guardConflicts();
    const read = jest.spyOn(AuthorizationQueries.prototype, 'lockForSettlement');
    try {
      const res = await gql(CAPTURE, { input: { reference } });
      expect(res.errors).toBeUndefined();
      expect(res.data.captureOrder.statusId).toBe(5);
      expect(read).not.toHaveBeenCalled();
      expect(conflicts.seen).toEqual([]);
    } finally {
      read.mockRestore();
      conflicts.stop();
    }
  });

  it('captures the whole authorization when no amount is given', async () => {
    const { reference } = await authorizedOrder('250.50');
    const res = await gql(CAPTURE, { input: { reference } });
    expect(res.data.captureOrder).toMatchObject({ statusId: 5, amount: '250.50', totalAmountCharged: '254.26', fee: '3.76' });
  });

  it('captures on the terms the customer authorized: a later switch of who bears the fee asks the card for no more than it holds', async () => {
    const bearer = async (feeBearer: 'MERCHANT' | 'CUSTOMER') =>
      expect((await gql(`mutation { updateMerchantSettings(input: { feeBearer: ${feeBearer} }) { feeBearer } }`, {})).errors).toBeUndefined();
    await bearer('MERCHANT');
    let whole: string;
    let part: string;
    try {
      // Authorized while the merchant bore the fee: 1,000.00 held on the card.
      whole = (await authorizedOrder()).reference;
      part = (await authorizedOrder()).reference;
      expect((await gql(ORDER, { reference: whole })).data.order).toMatchObject({ statusId: 6, totalAmountCharged: '1000.00', customerFee: '0.00' });
    } finally {
      await bearer('CUSTOMER');
    }
    const all = await gql(CAPTURE, { input: { reference: whole } });
    expect(all.data.captureOrder).toMatchObject({ statusId: 5, amount: '1000.00', fee: '15.00', customerFee: '0.00', totalAmountCharged: '1000.00' });
    const some = await gql(CAPTURE, { input: { reference: part, amount: '600.00' } });
    expect(some.data.captureOrder).toMatchObject({ statusId: 5, amount: '600.00', fee: '9.00', customerFee: '0.00', totalAmountCharged: '600.00' });
    // The total asked of the processor is the capture's totalAmountCharged: never more than the authorization held.
  });

  it.each([
    ['0', 'zero'],
    ['-5', 'negative'],
    ['10.005', 'more than two decimals'],
    ['1000.01', 'more than authorized'],
  ])('refuses to capture %s (%s) with CAPTURE_AMOUNT_INVALID, changing nothing', async (amount) => {
    const { reference } = await authorizedOrder();
    const res = await gql(CAPTURE, { input: { reference, amount } });
    expect(res.errors[0].extensions.code).toBe('CAPTURE_AMOUNT_INVALID');
    expect((await gql(ORDER, { reference })).data.order).toMatchObject({ statusId: 6, totalAmountCharged: '1015.00' });
  });

  it('voids an authorization: Voided, a webhook "voided", and nothing can be captured afterwards', async () => {
    const { reference, link } = await authorizedOrder();
    const res = await gql(VOID, { input: { reference } });
    expect(res.errors).toBeUndefined();
    expect(res.data.voidOrder).toMatchObject({ statusId: 7, status: 'Voided', orderPayments: [{ statusId: 7, status: 'Voided' }] });
    expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'voided']);
    expect((await gql(CAPTURE, { input: { reference } })).errors[0].extensions.code).toBe('CAPTURE_NOT_ALLOWED');
    expect((await gql(VOID, { input: { reference } })).errors[0].extensions.code).toBe('VOID_NOT_ALLOWED');
    const audit = await sql(`select target from audit_entry where subsidiary_id = ? and action = 'order.voided'`, [m.subsidiary.id]);
    expect(audit).toContainEqual({ target: `order ${reference}` });
    expect((await gql(TIMELINE, { reference })).data.orderTimeline.map((e: { event: string }) => e.event)).toContain('order.voided');

    // The customer's result page says the money was released.
    const page = await (await fetch(`${t.baseUrl}/pay/${link.reference}/result?reference=${encodeURIComponent(reference)}`)).text();
    expect(page).toContain('data-outcome="voided"');
    expect(page).toContain('You were not charged.');
  });

  it('refuses to capture an authorization past AUTHORIZATION_TTL_HOURS before the expiry job has voided it, calling no processor; it can still be voided', async () => {
    const { reference } = await authorizedOrder();
    // Made 24 hours and a second ago (the TTL here is 24); the expiry job has not run.
    await sql(`update checkout_order set authorized_at = authorized_at - interval '24 hours 1 second' where reference = ?`, [reference]);
    for (const input of [{ reference }, { reference, amount: '10.00' }, { reference, idempotencyKey: `late-${reference}` }]) {
      const res = await gql(CAPTURE, { input });
      expect(res.errors[0].extensions.code).toBe('CAPTURE_NOT_ALLOWED');
      expect(res.errors[0].message).toMatch(/^The authorization expired at \d{4}-\d{2}-\d{2}T.*; it can no longer be captured, only voided\.$/);
    }
    expect(await actionsOf(reference)).toEqual([]);
    const [{ state }] = await sql(
      `select s.state from sandbox_authorization s join order_payment p on p.processor_token = s.token join checkout_order o on o.id = p.order_id where o.reference = ?`,
      [reference],
    );
    expect(state).toBe('approved');
    expect((await gql(ORDER, { reference })).data.order).toMatchObject({ statusId: 6, status: 'Authorized' });
    expect((await gql(VOID, { input: { reference } })).data.voidOrder).toMatchObject({ statusId: 7, status: 'Voided' });
  });

  it('refuses to void a captured order, and to capture or void an order that was never authorized', async () => {
    const { reference } = await authorizedOrder();
    await gql(CAPTURE, { input: { reference } });
    expect((await gql(VOID, { input: { reference } })).errors[0].extensions.code).toBe('VOID_NOT_ALLOWED');

    const automatic = `AUTO-${Date.now()}`;
    await postEncrypted(t.baseUrl, '/checkout/order/create', k().publicKey, k().encryptionKey, {
      customer,
      order: { amount: 100, reference: automatic, description: 'x', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return' },
    });
    expect((await gql(CAPTURE, { input: { reference: automatic } })).errors[0].extensions.code).toBe('CAPTURE_NOT_ALLOWED');
    expect((await gql(VOID, { input: { reference: automatic } })).errors[0].extensions.code).toBe('VOID_NOT_ALLOWED');
  });

  it('lets exactly one of a capture and a void asked at the same moment win', async () => {
    for (let i = 0; i < 4; i++) {
      const { reference } = await authorizedOrder();
      const [captured, voided] = await Promise.all([gql(CAPTURE, { input: { reference } }), gql(VOID, { input: { reference } })]);
      const winners = [captured, voided].filter((r) => !r.errors);
      expect(winners).toHaveLength(1);
      const loser = captured.errors ? captured : voided;
      expect(['CAPTURE_NOT_ALLOWED', 'VOID_NOT_ALLOWED']).toContain(loser.errors[0].extensions.code);
      const final = (await gql(ORDER, { reference })).data.order;
      expect(final.statusId).toBe(captured.errors ? 7 : 5);
      expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', captured.errors ? 'voided' : 'successful']);
      expect(
        await sql(`select count(*)::int as n from authorization_action a join checkout_order o on o.id = a.order_id where o.reference = ?`, [reference]),
      ).toEqual([{ n: 1 }]);
    }
  });

  it('refuses a void whose claim waited for the order lock of another claim, which it sees once that claim commits (READ COMMITTED)', async () => {
    const { reference } = await authorizedOrder();
    const conflicts = guardConflicts();
    // Another claim holds the order's lock and records its capture, pending, not committed yet.
    const trx = await t.service.runtime.ctx.orm.em.getConnection().getKnex().transaction();
    let actionId: number | undefined;
    try {
      const locked = await trx.raw(`select id, environment_id from checkout_order where reference = ? for update`, [reference]);
      const order = locked.rows[0] as { id: number; environment_id: number };
      const inserted = await trx.raw(
        `insert into authorization_action (order_id, kind, actor, environment_id, idempotency_key) values (?, 'capture', 'capture', ?, ?) returning id`,
        [order.id, order.environment_id, `capture:${order.id}:holder`],
      );
      actionId = inserted.rows[0].id;
      const voiding = gql(VOID, { input: { reference } });
      // The void's claim (from the rows it read without locks) waits for the lock; its statement
      // started before the capture was committed, so the pending capture is not in its snapshot.
      await waitForLockWait('with g as (select id from checkout_order where id = $1::int and xmin = $11::xid%');
      await trx.commit();
      const voided = await voiding;
      expect(voided.errors[0].extensions.code).toBe('VOID_NOT_ALLOWED');
      expect(voided.errors[0].message).toContain('in progress');
      // The claim wrote nothing (the one-pending index saw the capture) and was decided again under the lock.
      expect(conflicts.seen).toEqual(['capture_void_claim']);
    } finally {
      conflicts.stop();
      if (!trx.isCompleted()) await trx.rollback();
      // The capture never reached the processor: failed, so that the reconciliation tests find only theirs.
      if (actionId !== undefined) await sql(`update authorization_action set state = 'failed' where id = ?`, [actionId]);
    }
    expect((await gql(ORDER, { reference })).data.order.statusId).toBe(6);
    expect(
      await sql(`select count(*)::int as n from authorization_action a join checkout_order o on o.id = a.order_id where o.reference = ?`, [reference]),
    ).toEqual([{ n: 1 }]);
  });

  it('refuses a capture whose order another capture took between its read and its claim: one capture, one processor call', async () => {
    const { reference } = await authorizedOrder();
    const conflicts = guardConflicts();
    let other: { data?: { captureOrder: { statusId: number } }; errors?: unknown } | undefined;
    const changed = changeBeforeClaim(async () => {
      other = await gql(CAPTURE, { input: { reference, amount: '400.00' } });
    });
    const res = await gql(CAPTURE, { input: { reference, amount: '600.00' } });
    expect(changed()).toBe(true);
    conflicts.stop();
    expect(other!.errors).toBeUndefined();
    expect(other!.data!.captureOrder.statusId).toBe(5);
    expect(res.errors[0].extensions.code).toBe('CAPTURE_NOT_ALLOWED');
    expect(conflicts.seen).toEqual(['capture_void_claim']);
    expect(await actionStates(reference)).toEqual([{ kind: 'capture', state: 'succeeded' }]);
    expect((await gql(ORDER, { reference })).data.order).toMatchObject({ statusId: 5, amount: '400.00' });
    expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'successful']);
  });

  it('claims a capture under the lock when its payment changed between the read and the claim', async () => {
    const { reference } = await authorizedOrder();
    const conflicts = guardConflicts();
    const changed = changeBeforeClaim(() =>
      sql(`update order_payment set returned_to_merchant_at = now() where order_id = (select id from checkout_order where reference = ?)`, [reference]),
    );
    const res = await gql(CAPTURE, { input: { reference } });
    expect(changed()).toBe(true);
    conflicts.stop();
    expect(res.errors).toBeUndefined();
    expect(res.data.captureOrder).toMatchObject({ statusId: 5, amount: '1000.00' });
    expect(conflicts.seen).toEqual(['capture_void_claim']);
    expect(await actionStates(reference)).toEqual([{ kind: 'capture', state: 'succeeded' }]);
  });

  it('voids an authorization left uncaptured past AUTHORIZATION_TTL_HOURS, with a webhook "voided"', async () => {
    const { reference } = await authorizedOrder();
    const fresh = (await authorizedOrder()).reference;
    // The first authorization was made 25 hours ago (the TTL here is 24).
    await sql(`update checkout_order set authorized_at = authorized_at - interval '25 hours' where reference = ?`, [reference]);
    expect(await t.service.runtime.ctx.services.payments.expireStaleAuthentications()).toBe(1);
    expect((await gql(ORDER, { reference })).data.order).toMatchObject({ statusId: 7, status: 'Voided', paymentResponseCode: 'Z7' });
    expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'voided']);
    expect((await gql(ORDER, { reference: fresh })).data.order.statusId).toBe(6);
    expect(await sql(`select actor_type from audit_entry where action = 'order.voided' and target = ?`, [`order ${reference}`])).toEqual([
      { actor_type: 'SYSTEM' },
    ]);
  });

  /** The processor no longer holds the order's authorization (revoked by the issuer): it refuses captures and voids of it until `restore`. */
  async function revokedAtProcessor(reference: string): Promise<{ restore: () => Promise<void> }> {
    const [{ processor_token: token }] = await sql(
      `select p.processor_token from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ?`,
      [reference],
    );
    await sql(`update sandbox_authorization set state = 'declined' where token = ?`, [token]);
    return { restore: () => sql(`update sandbox_authorization set state = 'approved' where token = ?`, [token]).then(() => undefined) };
  }
  const actionsOf = async (reference: string) =>
    (await sql(
      `select a.kind, a.actor, a.state, a.idempotency_key from authorization_action a join checkout_order o on o.id = a.order_id where o.reference = ? order by a.id`,
      [reference],
    )) as Array<{ kind: string; actor: string; state: string; idempotency_key: string }>;

  it('the sandbox acquirer settles an authorization once: a second capture, or a capture after a void, is declined whatever its key', async () => {
    const processor = new SandboxProcessor(t.service.runtime.ctx.orm);
    const tokenOf = async (reference: string) =>
      (await sql(`select p.processor_token from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ?`, [reference]))[0]
        .processor_token as string;
    const captured = await tokenOf((await authorizedOrder()).reference);
    const capture = (token: string, key: string) => processor.capture({ token, amount: '1015.00', currency: 'NGN', idempotencyKey: key });
    expect(await capture(captured, `sbx-test-${captured}-1`)).toMatchObject({ kind: 'approved' });
    expect(await capture(captured, `sbx-test-${captured}-1`)).toMatchObject({ kind: 'approved' }); // the same call again: its first answer
    expect(await capture(captured, `sbx-test-${captured}-2`)).toMatchObject({ kind: 'declined', code: '14' });
    const voided = await tokenOf((await authorizedOrder()).reference);
    expect(await processor.voidAuthorization({ token: voided, idempotencyKey: `sbx-test-${voided}-1` })).toMatchObject({ kind: 'approved' });
    expect(await capture(voided, `sbx-test-${voided}-2`)).toMatchObject({ kind: 'declined', code: '14' });
  });

  it('the sandbox acquirer does not mark an authorization captured by a call whose key was closed at that moment', async () => {
    const processor = new SandboxProcessor(t.service.runtime.ctx.orm);
    const { reference } = await authorizedOrder();
    const [{ processor_token: token }] = await sql(
      `select p.processor_token from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ?`,
      [reference],
    );
    const key = `sbx-race-${token}`;
    // The engine is closing the key (its record not committed yet) while the capture call arrives.
    const closing = await t.service.runtime.ctx.orm.em.getConnection().getKnex().transaction();
    let capturing: Promise<unknown> | undefined;
    try {
      await closing.raw(
        `insert into sandbox_authorization (token, kind, outcome_code, outcome_message, issuer, state, idempotency_key) values (?, 'closed', 'Z5', 'closed', 'Unknown issuer', 'declined', ?)`,
        [`sbx_closed_${token}`, key],
      );
      capturing = processor.capture({ token, amount: '1015.00', currency: 'NGN', idempotencyKey: key });
      let waiting = false;
      for (let i = 0; i < 500 && !waiting; i++) {
        waiting = (await sql(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%settled_as%'`))[0].n > 0;
        if (!waiting) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(waiting).toBe(true);
      await closing.commit();
      expect(await capturing).toMatchObject({ kind: 'declined', code: 'Z5' });
    } finally {
      if (!closing.isCompleted()) await closing.rollback();
      await capturing?.catch(() => undefined);
    }
    // The authorization is still held: a capture under another key takes it.
    expect(await processor.capture({ token, amount: '1015.00', currency: 'NGN', idempotencyKey: `${key}-2` })).toMatchObject({ kind: 'approved' });
  });

  it('a capture the processor refused can be asked again: each capture is its own call, under a key of its own', async () => {
    const { reference } = await authorizedOrder();
    const revoked = await revokedAtProcessor(reference);
    const refused = await gql(CAPTURE, { input: { reference } });
    expect(refused.errors[0].extensions.code).toBe('CAPTURE_NOT_ALLOWED');
    expect((await gql(ORDER, { reference })).data.order.statusId).toBe(6);
    await revoked.restore();
    const captured = await gql(CAPTURE, { input: { reference } });
    expect(captured.errors).toBeUndefined();
    expect(captured.data.captureOrder).toMatchObject({ statusId: 5, amount: '1000.00' });
    const actions = await actionsOf(reference);
    expect(actions.map((a) => `${a.kind} ${a.state}`)).toEqual(['capture failed', 'capture succeeded']);
    expect(new Set(actions.map((a) => a.idempotency_key)).size).toBe(2);
  });

  it('asks the processor again to void an expired authorization it refused an hour later, not at every run of the clock', async () => {
    const { reference } = await authorizedOrder();
    await sql(`update checkout_order set authorized_at = authorized_at - interval '25 hours' where reference = ?`, [reference]);
    const captures = t.service.runtime.ctx.services.payments.captures;
    const revoked = await revokedAtProcessor(reference);
    try {
      await captures.expireAuthorizations();
      await captures.expireAuthorizations();
      expect((await actionsOf(reference)).map((a) => `${a.actor} ${a.state}`)).toEqual(['expiry failed']);
      clock.set(new Date(Date.now() + 61 * 60_000));
      await captures.expireAuthorizations();
      expect((await actionsOf(reference)).map((a) => `${a.actor} ${a.state}`)).toEqual(['expiry failed', 'expiry failed']);
      await revoked.restore();
      clock.set(new Date(Date.now() + 122 * 60_000));
      await captures.expireAuthorizations();
      expect((await actionsOf(reference)).map((a) => `${a.actor} ${a.state}`)).toEqual(['expiry failed', 'expiry failed', 'expiry succeeded']);
      expect((await gql(ORDER, { reference })).data.order).toMatchObject({ statusId: 7, paymentResponseCode: 'Z7' });
    } finally {
      clock.set(new Date());
    }
  });

  it('fails a capture the processor has no record of past the deadline only after closing its key there; the order can be captured again', async () => {
    const { reference } = await authorizedOrder();
    const [order] = await sql(`select id, environment_id from checkout_order where reference = ?`, [reference]);
    // A capture recorded three minutes ago whose call never reached the processor (a crash before it was sent).
    await sql(
      `insert into authorization_action (order_id, environment_id, kind, actor, idempotency_key, created_at) values (?, ?, 'capture', 'capture', ?, now() - interval '3 minutes')`,
      [order.id, order.environment_id, `capture:${order.id}:lost`],
    );
    expect(await t.service.runtime.ctx.services.payments.captures.reconcilePending()).toBe(1);
    expect(await sql(`select kind, state from sandbox_authorization where idempotency_key = ?`, [`capture:${order.id}:lost`])).toEqual([
      { kind: 'closed', state: 'declined' },
    ]);
    expect((await gql(ORDER, { reference })).data.order.statusId).toBe(6);
    const captured = await gql(CAPTURE, { input: { reference } });
    expect(captured.errors).toBeUndefined();
    expect(captured.data.captureOrder.statusId).toBe(5);
  });

  it('settles a capture whose answer was lost from the processor record of its idempotency key', async () => {
    const { reference } = await authorizedOrder();
    const [order] = await sql(`select o.id, p.processor_token from checkout_order o join order_payment p on p.order_id = o.id where o.reference = ?`, [
      reference,
    ]);
    // The capture was recorded a minute ago and reached the processor, then the process stopped before writing the answer.
    await captureWithLostAnswer(t, { id: order.id, processorToken: order.processor_token }, { secondsAgo: 60 });
    // While the capture is pending, a void is refused.
    expect((await gql(VOID, { input: { reference } })).errors[0].extensions.code).toBe('VOID_NOT_ALLOWED');
    expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(1);
    expect((await gql(ORDER, { reference })).data.order).toMatchObject({ statusId: 5, amount: '500.00', totalAmountCharged: '507.50' });
    expect((await events(reference)).map((e) => e.notifyType)).toEqual(['authorized', 'successful']);
  });

  it('shows Authorized and Voided in the REST order status and verify answers, with is_final_status false then true', async () => {
    const { reference } = await authorizedOrder();
    const held = await restStatus(reference);
    expect(held).toMatchObject({ is_final_status: false, requery_needed: true, status: 'success', status_code: '00', data: { payment_status: 6 } });
    expect((await restVerify(reference)).data).toMatchObject({ statusId: 6, status: 'Authorized', orderPayments: [{ statusId: 6, status: 'Authorized' }] });
    await gql(VOID, { input: { reference } });
    const released = await restStatus(reference);
    expect(released).toMatchObject({ is_final_status: true, requery_needed: false, data: { payment_status: 7 } });
    const verified = (await restVerify(reference)).data;
    expect(verified).toMatchObject({ statusId: 7, status: 'Voided' });
    // Every documented field is still there.
    for (const field of [
      'orderReference',
      'paymentReference',
      'productName',
      'totalAmountCharged',
      'paymentMethod',
      'customer',
      'cardDetails',
      'paymentLink',
    ]) {
      expect(verified).toHaveProperty(field);
    }
  });

  it('gives a REST order on a MANUAL link the link capture method and answers its payment as authorized', async () => {
    const link = await manualLink('NOAUTH', '300');
    const reference = `REST-${Date.now()}`;
    const created = await postEncrypted(t.baseUrl, '/checkout/order/create', k().publicKey, k().encryptionKey, {
      customer,
      order: { amount: 300, reference, description: 'Tent', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return', paymentLinkId: link.id },
    });
    expect(created.body.statusCode).toBe('01');
    const paid = await postEncrypted(t.baseUrl, '/checkout/order/pay', k().publicKey, k().encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      ...card('4111111111111111'),
    });
    expect(paid.body).toMatchObject({ status: 'success', statusCode: '00', message: 'Order payment authorized' });
    expect((await gql(ORDER, { reference })).data.order).toMatchObject({ statusId: 6, captureMethod: 'MANUAL' });
    // An order created over REST without a link is captured at once.
    const plain = `PLAIN-${Date.now()}`;
    await postEncrypted(t.baseUrl, '/checkout/order/create', k().publicKey, k().encryptionKey, {
      customer,
      order: { amount: 300, reference: plain, description: 'x', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return' },
    });
    expect((await gql(ORDER, { reference: plain })).data.order.captureMethod).toBe('AUTOMATIC');
  });

  it('creates GraphQL orders AUTOMATIC by default or MANUAL when asked, and refuses a method other than the link one', async () => {
    const input = (extra: Record<string, unknown>) => ({
      customer,
      amount: '100.00',
      reference: `GQL-${Date.now()}-${Math.random()}`,
      redirectUrl: 'https://merchant.test/return',
      ...extra,
    });
    const create = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { captureMethod } }`;
    expect((await gql(create, { input: input({}) }, k().publicKey)).data.createOrder.captureMethod).toBe('AUTOMATIC');
    expect((await gql(create, { input: input({ captureMethod: 'MANUAL' }) }, k().publicKey)).data.createOrder.captureMethod).toBe('MANUAL');
    const link = await manualLink('NOAUTH', '100');
    expect((await gql(create, { input: input({ paymentLinkId: link.id }) }, k().publicKey)).data.createOrder.captureMethod).toBe('MANUAL');
    expect((await gql(create, { input: input({ paymentLinkId: link.id, captureMethod: 'AUTOMATIC' }) }, k().publicKey)).errors[0].extensions.code).toBe(
      'VAL400',
    );
  });

  it('tells the customer on the hosted result page that the payment is authorised but not charged yet (after 3-D Secure)', async () => {
    const link = await manualLink('AUTH');
    const res = await request(t.baseUrl, 'POST', `/pay/${link.reference}`, {
      body: { paymentOption: 'C', customer, data: encryptPayload(card(), k().encryptionKey) },
    });
    const done = await fetch(res.body.redirectUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'otp=123456',
    });
    const landed = new URL(done.headers.get('location')!);
    expect(landed.searchParams.get('status')).toBe('authorized');
    const page = await (await fetch(landed)).text();
    expect(page).toContain('data-outcome="authorized"');
    expect(page).toContain('you have not been charged yet');
    expect(page).toContain('Lekki Outfitters will take the payment when your order is confirmed');
  });

  it('refuses captures and voids with the public key, and in live mode', async () => {
    const { reference } = await authorizedOrder();
    expect((await gql(CAPTURE, { input: { reference } }, k().publicKey)).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(VOID, { input: { reference } }, k().publicKey)).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(CAPTURE, { input: { reference } }, m.keys.live.privateKey)).errors[0].extensions.code).toBe('NOT_AVAILABLE_IN_LIVE_MODE');
    expect((await gql(VOID, { input: { reference } }, m.keys.live.privateKey)).errors[0].extensions.code).toBe('NOT_AVAILABLE_IN_LIVE_MODE');
    expect((await gql(ORDER, { reference })).data.order.statusId).toBe(6);
  });

  it('counts an Authorized order as paying a single-charge link until it is voided', async () => {
    const created = await gql(CREATE_LINK, {
      input: { name: 'Bike', description: 'One bike', paymentType: 'SC', currency: 'NGN', authOption: 'NOAUTH', amount: '800', captureMethod: 'MANUAL' },
    });
    const link = created.data.createPaymentLink;
    const status = async () => (await gql(`query ($id: Int) { paymentLink(id: $id) { status } }`, { id: link.id })).data.paymentLink.status;
    const paid = await request(t.baseUrl, 'POST', `/pay/${link.reference}`, {
      body: { paymentOption: 'C', customer, data: encryptPayload(card(), k().encryptionKey) },
    });
    const reference = new URL(paid.body.redirectUrl).searchParams.get('reference')!;
    expect(await status()).toBe('PAID');
    const second = await request(t.baseUrl, 'POST', `/pay/${link.reference}`, {
      body: { paymentOption: 'C', customer, data: encryptPayload(card(), k().encryptionKey) },
    });
    expect(second.status).toBe(400);
    await gql(VOID, { input: { reference } });
    expect(await status()).toBe('ACTIVE');
  });

  it('refuses MANUAL capture on subscription links', async () => {
    const res = await gql(CREATE_LINK, {
      input: { name: 'Gym', description: 'Monthly', paymentType: 'SUB', currency: 'NGN', amount: '5000', captureMethod: 'MANUAL' },
    });
    expect(res.errors[0]).toMatchObject({
      extensions: { code: 'VAL400' },
      message: 'The CaptureMethod field must be AUTOMATIC for subscription links (PaymentType SUB).',
    });
  });
});
