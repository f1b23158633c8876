import { postEncrypted } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { usePaidOrdersService } from '../../support/paid-orders-service';
import type { Tenant } from '../../../src/merchants/tenant';
import type { MemberRole } from '../../../src/merchants/member-role';
import type { SandboxProcessor } from '../../../src/payments/sandbox/sandbox.processor';
import { verifiesIndependently } from '../events/helpers';
import { delayedCall, landsJustBeforeClose } from '../../support/processor-faults';

const REFUND = `mutation ($input: RefundOrderInput!) {
  refundOrder(input: $input) { id orderReference amount currency status reason failureReason createdAt updatedAt }
}`;
const ORDER = `query ($reference: String!) {
  order(reference: $reference) { statusId status totalAmountCharged amountRefunded refunds { id amount status reason failureReason } }
}`;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
let counter = 0;

/**
 * Refunds through GraphQL against the real service on PostgreSQL (a database of this file's own:
 * its webhook dispatcher and refund reconciliation act on every row they find).
 */
describe('refunds', () => {
  const file = usePaidOrdersService({ database: 'refunds', referencePrefix: 'RF', card: '5123450000000008' });
  const { services, sql, gql, codeOf, paid, timelineOf, hookedMerchant } = file;
  const refund = (input: Record<string, unknown>, apiKey?: string) => gql(REFUND, { input }, apiKey);
  const orderOf = async (reference: string, apiKey?: string) => (await gql(ORDER, { reference }, apiKey)).data.order;
  const sandbox = () => (services().payments as unknown as { processors: { test: SandboxProcessor } }).processors.test;

  it('refunds the whole balance when no amount is given; the order stays Successful and shows the refund', async () => {
    const reference = await paid();
    const res = await refund({ reference, reason: 'Customer returned the goods' });
    expect(res.errors).toBeUndefined();
    expect(res.data.refundOrder).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      orderReference: reference,
      amount: '1000.00',
      currency: 'NGN',
      status: 'SUCCEEDED',
      reason: 'Customer returned the goods',
      failureReason: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(await orderOf(reference)).toEqual({
      statusId: 5,
      status: 'Successful',
      totalAmountCharged: '1000.00',
      amountRefunded: '1000.00',
      refunds: [{ id: res.data.refundOrder.id, amount: '1000.00', status: 'SUCCEEDED', reason: 'Customer returned the goods', failureReason: null }],
    });
    // Nothing is left: another refund is refused.
    expect(codeOf(await refund({ reference }))).toBe('REFUND_AMOUNT_INVALID');
    expect(codeOf(await refund({ reference, amount: '0.01' }))).toBe('REFUND_AMOUNT_INVALID');
    expect(await timelineOf(reference)).toEqual(expect.arrayContaining(['refund.requested', 'refund.succeeded']));
    const audit = await sql(`select action, actor_type, target from audit_entry where subsidiary_id = ? and action = 'refund.created'`, [file.m.subsidiary.id]);
    expect(audit).toContainEqual({
      action: 'refund.created',
      actor_type: 'API_KEY',
      target: `refund ${res.data.refundOrder.id} of order ${reference} for NGN 1,000.00`,
    });
  });

  it('refunds in parts until the balance is used up, and lists the refunds oldest first', async () => {
    const reference = await paid();
    for (const amount of ['250.50', '249.50', '400']) expect((await refund({ reference, amount })).data.refundOrder).toMatchObject({ status: 'SUCCEEDED' });
    expect(codeOf(await refund({ reference, amount: '100.01' }))).toBe('REFUND_AMOUNT_INVALID');
    const last = await refund({ reference });
    expect(last.data.refundOrder).toMatchObject({ amount: '100.00', status: 'SUCCEEDED' });
    const order = await orderOf(reference);
    expect(order.amountRefunded).toBe('1000.00');
    expect(order.refunds.map((r: { amount: string }) => r.amount)).toEqual(['250.50', '249.50', '400.00', '100.00']);
  });

  it('shows the same refunds, refunded and refundable amounts and disputes on an order of the orders list as on the order itself', async () => {
    const reference = await paid();
    expect((await refund({ reference, amount: '250.50' })).data.refundOrder.status).toBe('SUCCEEDED');
    const FIELDS = 'orderReference amountRefunded amountRefundable refunds { amount status } disputes { id }';
    const single = (await gql(`query ($reference: String!) { order(reference: $reference) { ${FIELDS} } }`, { reference })).data.order;
    expect(single).toMatchObject({ amountRefunded: '250.50', amountRefundable: '749.50', refunds: [{ amount: '250.50', status: 'SUCCEEDED' }], disputes: [] });
    // The first request of a document runs on graphql-js, the next ones compiled: both answer the same.
    for (let run = 0; run < 3; run++) {
      // The search matches references by prefix: the order is picked out of the page by its reference.
      const listed = await gql(`query ($search: String) { orders(first: 50, filter: { search: $search }) { edges { node { ${FIELDS} } } } }`, {
        search: reference,
      });
      expect(listed.errors).toBeUndefined();
      expect(
        listed.data.orders.edges
          .map((e: { node: { orderReference: string } }) => e.node)
          .filter((n: { orderReference: string }) => n.orderReference === reference),
      ).toEqual([single]);
    }
  });

  it('tells how much a refund may still take: the balance less every refund not failed, and nothing on an order that is not paid', async () => {
    const refundable = async (reference: string) =>
      (await gql(`query ($r: String!) { order(reference: $r) { amountRefundable } }`, { r: reference })).data.order.amountRefundable;
    const reference = await paid();
    expect(await refundable(reference)).toBe('1000.00');
    await refund({ reference, amount: '250.50' });
    expect(await refundable(reference)).toBe('749.50');
    await refund({ reference });
    expect(await refundable(reference)).toBe('0.00');

    // A refund the issuer declines gives its amount back.
    const declined = await paid(file.m, '4000000000005126');
    expect((await refund({ reference: declined, amount: '400' })).data.refundOrder.status).toBe('FAILED');
    expect(await refundable(declined)).toBe('1000.00');

    const failed = await paid(file.m, '4000000000000002');
    expect((await orderOf(failed)).status).toBe('Failed');
    expect(await refundable(failed)).toBe('0.00');
  });

  it('ten refunds at the same time never take more than the balance together', async () => {
    const reference = await paid();
    const answers = await Promise.all(Array.from({ length: 10 }, () => refund({ reference, amount: '150' })));
    const accepted = answers.filter((a) => a.data?.refundOrder);
    expect(accepted).toHaveLength(6);
    expect(answers.filter((a) => codeOf(a) === 'REFUND_AMOUNT_INVALID')).toHaveLength(4);
    const order = await orderOf(reference);
    expect(order.amountRefunded).toBe('900.00');
    expect(order.refunds).toHaveLength(6);
  });

  describe('idempotency keys', () => {
    it('the same key with the same input answers the first refund and refunds nothing more', async () => {
      const reference = await paid();
      const key = `key-${reference}`;
      const first = await refund({ reference, amount: '100', idempotencyKey: key });
      const again = await refund({ reference, amount: '100.00', idempotencyKey: key });
      expect(again.data.refundOrder).toEqual(first.data.refundOrder);
      expect((await orderOf(reference)).refunds).toHaveLength(1);
      expect(
        await sql(`select count(*)::int as n from sandbox_authorization where kind = 'refund' and idempotency_key = ?`, [first.data.refundOrder.id]),
      ).toEqual([{ n: 1 }]);
    });

    it('the same key sent ten times at once for the whole balance refunds once, and every request answers that refund', async () => {
      const reference = await paid();
      const key = `burst-${reference}`;
      const answers = await Promise.all(Array.from({ length: 10 }, () => refund({ reference, idempotencyKey: key })));
      expect(answers.map((a) => a.errors ?? null)).toEqual(Array(10).fill(null));
      const ids = new Set(answers.map((a) => a.data.refundOrder.id));
      expect(ids.size).toBe(1);
      const order = await orderOf(reference);
      expect(order.refunds).toHaveLength(1);
      expect(order.amountRefunded).toBe(order.totalAmountCharged);
      expect(await sql(`select count(*)::int as n from sandbox_authorization where kind = 'refund' and idempotency_key = ?`, [[...ids][0]])).toEqual([
        { n: 1 },
      ]);
    });

    it('refuses a key used before with another amount or another order, and refunds nothing', async () => {
      const reference = await paid();
      const other = await paid();
      const key = `key-${reference}`;
      await refund({ reference, amount: '100', idempotencyKey: key });
      expect(codeOf(await refund({ reference, amount: '200', idempotencyKey: key }))).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(codeOf(await refund({ reference, idempotencyKey: key }))).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(codeOf(await refund({ reference: other, amount: '100', idempotencyKey: key }))).toBe('IDEMPOTENCY_KEY_REUSED');
      expect((await orderOf(reference)).refunds).toHaveLength(1);
      expect((await orderOf(other)).refunds).toHaveLength(0);
    });

    it('keys are per environment: another merchant may use the same key', async () => {
      const key = `shared-key-${Date.now()}`;
      const mine = await paid();
      const otherMerchant = await createTestMerchant(file.t);
      const theirs = await paid(otherMerchant);
      expect((await refund({ reference: mine, amount: '10', idempotencyKey: key })).data.refundOrder.status).toBe('SUCCEEDED');
      const res = await refund({ reference: theirs, amount: '20', idempotencyKey: key }, otherMerchant.keys.test.privateKey);
      expect(res.data.refundOrder).toMatchObject({ orderReference: theirs, amount: '20.00' });
    });
  });

  describe('refusals', () => {
    it('refuses an order that is not paid (REFUND_NOT_ALLOWED)', async () => {
      const reference = `RF-UNPAID-${Date.now()}-${++counter}`;
      const created = await postEncrypted(file.t.baseUrl, '/checkout/order/create', file.m.keys.test.publicKey, file.m.keys.test.encryptionKey, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 1000, reference, description: 'Unpaid', currency: 'NGN' },
        payment: { RedirectUrl: 'https://merchant.test/return' },
      });
      expect(created.body.statusCode).toBe('01');
      expect(codeOf(await refund({ reference }))).toBe('REFUND_NOT_ALLOWED');
      const failed = await paid(file.m, '4000000000000002');
      expect(codeOf(await refund({ reference: failed, amount: '10' }))).toBe('REFUND_NOT_ALLOWED');
      expect(
        await sql(`select count(*)::int as n from refund r join checkout_order o on o.id = r.order_id where o.reference in (?, ?)`, [reference, failed]),
      ).toEqual([{ n: 0 }]);
    });

    it('refuses an amount of zero, below zero, with three decimals or above the balance (REFUND_AMOUNT_INVALID)', async () => {
      const reference = await paid();
      for (const amount of ['0', '-5', '10.123', '1000.01']) expect(codeOf(await refund({ reference, amount }))).toBe('REFUND_AMOUNT_INVALID');
      expect((await orderOf(reference)).refunds).toEqual([]);
    });

    it("refuses the public key (FORBIDDEN) and never reaches another merchant's order", async () => {
      const reference = await paid();
      expect(codeOf(await refund({ reference }, file.m.keys.test.publicKey))).toBe('FORBIDDEN');
      const other = await createTestMerchant(file.t);
      const res = await refund({ reference }, other.keys.test.privateKey);
      expect(res.errors[0]).toMatchObject({ message: 'Order not found at the moment', extensions: { code: '13' } });
      // The order's refunds are private-key data too.
      expect(codeOf(await gql(ORDER, { reference }, file.m.keys.test.publicKey))).toBe('FORBIDDEN');
      expect((await orderOf(reference)).refunds).toEqual([]);
    });

    it('answers NOT_AVAILABLE_IN_LIVE_MODE with a live key', async () => {
      expect(codeOf(await refund({ reference: 'ANY-ORDER', amount: '10' }, file.m.keys.live.privateKey))).toBe('NOT_AVAILABLE_IN_LIVE_MODE');
    });

    it('lets OWNER, ADMIN and SUPPORT members refund, not DEVELOPER or VIEWER', async () => {
      const reference = await paid();
      const keyTenant = await services().auth.authenticate(file.m.keys.test.privateKey);
      const as = (role: MemberRole): Tenant => ({
        ...keyTenant,
        keyKind: undefined,
        keyId: undefined,
        member: { memberId: 1, email: `${role}@team.test`, role, testOnly: false },
      });
      for (const role of ['DEVELOPER', 'VIEWER'] as const) {
        await expect(services().refunds.refundOrder(as(role), { reference, amount: '1' })).rejects.toMatchObject({ kind: 'forbidden' });
      }
      for (const role of ['OWNER', 'ADMIN', 'SUPPORT'] as const) {
        expect(await services().refunds.refundOrder(as(role), { reference, amount: '1' })).toMatchObject({ status: 'SUCCEEDED' });
      }
      const actors = await sql(`select actor_type, actor_label from audit_entry where subsidiary_id = ? and action = 'refund.created' and target like ?`, [
        file.m.subsidiary.id,
        `%${reference}%`,
      ]);
      expect(actors.map((a) => (a as { actor_label: string }).actor_label)).toEqual(['OWNER@team.test', 'ADMIN@team.test', 'SUPPORT@team.test']);
    });
  });

  it('refunds a PayPal payment', async () => {
    const reference = `RF-PP-${Date.now()}-${++counter}`;
    await postEncrypted(file.t.baseUrl, '/checkout/order/create', file.m.keys.test.publicKey, file.m.keys.test.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1000, reference, description: 'PayPal', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return' },
    });
    const pay = await postEncrypted(file.t.baseUrl, '/checkout/order/pay', file.m.keys.test.publicKey, file.m.keys.test.encryptionKey, {
      reference,
      paymentOption: 'PAYPAL',
      country: 'NG',
      paypal: { fullName: 'Ada Obi', mobile: '+2348012345678', house: '12B', billingAddress: billing },
    });
    const approved = await fetch(pay.body.data.paymentDetail.redirectUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'decision=approve',
    });
    expect(approved.headers.get('location')).toContain('status=successful');
    const total = (await orderOf(reference)).totalAmountCharged;
    expect((await refund({ reference })).data.refundOrder).toMatchObject({ amount: total, status: 'SUCCEEDED' });
  });

  it('every refund of an order paid with 4000000000005126 fails: declined by the issuer, and the balance is kept', async () => {
    const reference = await paid(file.m, '4000000000005126');
    expect((await orderOf(reference)).status).toBe('Successful');
    const first = await refund({ reference, amount: '400' });
    expect(first.data.refundOrder).toMatchObject({ status: 'FAILED', failureReason: 'Refund declined by the issuer' });
    const whole = await refund({ reference });
    expect(whole.data.refundOrder).toMatchObject({ amount: '1000.00', status: 'FAILED', failureReason: 'Refund declined by the issuer' });
    const order = await orderOf(reference);
    expect(order.amountRefunded).toBe('0.00');
    expect(order.refunds.map((r: { status: string }) => r.status)).toEqual(['FAILED', 'FAILED']);
    expect(await timelineOf(reference)).toEqual(expect.arrayContaining(['refund.requested', 'refund.failed']));
  });

  it('sends the signed refund webhook, its data the refund as GraphQL shows it', async () => {
    const { receiver: r, merchant: hooked } = await hookedMerchant();
    const reference = await paid(hooked);
    const declined = await paid(hooked, '4000000000005126');
    const ok = (await refund({ reference, amount: '125.5', reason: 'Damaged' }, hooked.keys.test.privateKey)).data.refundOrder;
    const failed = (await refund({ reference: declined }, hooked.keys.test.privateKey)).data.refundOrder;
    // Two payments (notify "transaction") and two refunds.
    const received = await r.waitForCount(4);
    const refundHooks = received.filter((h) => h.json.notify === 'refund');
    expect(refundHooks.map((h) => h.json.notifyType).sort()).toEqual(['failed', 'succeeded']);
    const succeeded = refundHooks.find((h) => h.json.notifyType === 'succeeded')!;
    expect(verifiesIndependently(hooked.webhookSecret, succeeded.headers, succeeded.body)).toBe(true);
    expect(succeeded.headers['webhook-id']).toBe(succeeded.json.eventId);
    expect(Object.keys(succeeded.json)).toEqual(['notify', 'notifyType', 'eventId', 'livemode', 'data']);
    expect(succeeded.json).toEqual({ notify: 'refund', notifyType: 'succeeded', eventId: expect.any(String), livemode: false, data: ok });
    expect(refundHooks.find((h) => h.json.notifyType === 'failed')!.json.data).toEqual(failed);
  });

  it("the dashboard summary shows the period's refunded volume per currency, SUCCEEDED refunds only", async () => {
    const fresh = await createTestMerchant(file.t);
    const from = new Date(Date.now() - 60_000).toISOString();
    const one = await paid(fresh);
    const two = await paid(fresh);
    const declined = await paid(fresh, '4000000000005126');
    for (const [reference, amount] of [
      [one, '100.25'],
      [two, '50'],
      [declined, '10'],
    ] as const) {
      expect((await refund({ reference, amount }, fresh.keys.test.privateKey)).errors).toBeUndefined();
    }
    const to = new Date(Date.now() + 60_000).toISOString();
    const summary = await gql(
      `query ($from: DateTimeISO!, $to: DateTimeISO!) { dashboardSummary(from: $from, to: $to) { refunded { currency count amount } } }`,
      { from, to },
      fresh.keys.test.privateKey,
    );
    expect(summary.data.dashboardSummary.refunded).toEqual([{ currency: 'NGN', count: 2, amount: '150.25' }]);
  });

  describe('a refund whose processor answer was lost is settled from the processor record', () => {
    const age = (id: string, seconds: number) => sql(`update refund set created_at = now() - make_interval(secs => ?) where id = ?`, [seconds, id]);
    const reconcile = () => services().refunds.reconcilePendingRefunds();
    /** A refund the processor makes, whose answer is lost on the way back: the request answers it PENDING. */
    const refundWithLostAnswer = async (reference: string, amount: string) => {
      const processor = sandbox();
      const original = processor.refund;
      processor.refund = async (request) => {
        await original.call(processor, request);
        throw new Error('connection reset by the acquirer');
      };
      try {
        return await refund({ reference, amount });
      } finally {
        processor.refund = original;
      }
    };

    it('an answer lost on the way back: PENDING, then settled once by reconciliation', async () => {
      const reference = await paid();
      const res = await refundWithLostAnswer(reference, '300');
      const pending = res.data.refundOrder;
      expect(pending).toMatchObject({ status: 'PENDING', amount: '300.00' });
      // The PENDING refund holds its amount: the balance left is 700.
      expect(codeOf(await refund({ reference, amount: '700.01' }))).toBe('REFUND_AMOUNT_INVALID');
      // Too young: its own request might still be settling it.
      expect(await reconcile()).toBe(0);
      await age(pending.id, 10);
      expect(await reconcile()).toBe(1);
      expect(await reconcile()).toBe(0);
      expect((await orderOf(reference)).refunds).toEqual([expect.objectContaining({ id: pending.id, status: 'SUCCEEDED' })]);
      expect(await sql(`select count(*)::int as n from sandbox_authorization where idempotency_key = ?`, [pending.id])).toEqual([{ n: 1 }]);
      const entries = await services().timeline.list(await services().auth.authenticate(file.m.keys.test.privateKey), reference);
      expect(entries.find((e) => e.event === 'refund.succeeded')?.metadata).toMatchObject({ refundId: pending.id, reconciled: true });
    });

    it('reconciliations running at once settle a refund once: one timeline entry, one webhook event', async () => {
      const reference = await paid();
      const res = await refundWithLostAnswer(reference, '250');
      const { id } = res.data.refundOrder;
      await age(id, 10);
      const settled = await Promise.all(Array.from({ length: 4 }, () => reconcile()));
      expect(settled.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await sql(`select count(*)::int as n from timeline_event where event = 'refund.succeeded' and metadata->>'refundId' = ?`, [id])).toEqual([
        { n: 1 },
      ]);
      expect(await sql(`select count(*)::int as n from outbox_event where notify = 'refund' and payload->'data'->>'id' = ?`, [id])).toEqual([{ n: 1 }]);
    });

    it('a refund that cannot be reconciled now does not hold up the others', async () => {
      const [stuck, next] = [
        (await refundWithLostAnswer(await paid(), '100')).data.refundOrder.id,
        (await refundWithLostAnswer(await paid(), '100')).data.refundOrder.id,
      ];
      await age(stuck, 20);
      await age(next, 10);
      const processor = sandbox();
      const original = processor.lookupRefund;
      processor.lookupRefund = async (id) => {
        if (id === stuck) throw new Error('the processor answered garbage');
        return original.call(processor, id);
      };
      try {
        expect(await reconcile()).toBe(1);
      } finally {
        processor.lookupRefund = original;
      }
      const statusOf = async (id: string) => (await sql(`select status from refund where id = ?`, [id]))[0]!.status;
      expect([await statusOf(stuck), await statusOf(next)]).toEqual(['PENDING', 'SUCCEEDED']);
      expect(await reconcile()).toBe(1);
    });

    it('a call that never reached the processor fails after the processor deadline, and frees the balance', async () => {
      const reference = await paid();
      const processor = sandbox();
      const original = processor.refund;
      processor.refund = async () => {
        throw new Error('acquirer unreachable');
      };
      let res;
      try {
        res = await refund({ reference });
      } finally {
        processor.refund = original;
      }
      const pending = res.data.refundOrder;
      expect(pending.status).toBe('PENDING');
      await age(pending.id, 60);
      expect(await reconcile()).toBe(0); // the processor may still answer
      await age(pending.id, 180);
      expect(await reconcile()).toBe(1);
      expect((await orderOf(reference)).refunds).toEqual([expect.objectContaining({ status: 'FAILED', failureReason: 'Refund not processed' })]);
      expect((await refund({ reference })).data.refundOrder).toMatchObject({ amount: '1000.00', status: 'SUCCEEDED' });
    });

    it('a call still on its way when the deadline fails the refund is refused by the processor: its key was closed first, no money moves', async () => {
      const reference = await paid();
      const slow = delayedCall(sandbox(), 'refund');
      let answered: Promise<{ data: { refundOrder: { id: string; status: string } } }> | undefined;
      try {
        answered = refund({ reference, amount: '400' });
        let id: string | undefined;
        for (let i = 0; i < 500 && !id; i++) {
          [{ id } = { id: undefined }] = await sql(`select r.id from refund r join checkout_order o on o.id = r.order_id where o.reference = ?`, [reference]);
          if (!id) await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await age(id!, 180);
        expect(await reconcile()).toBe(1);
        expect(await sql(`select kind, state from sandbox_authorization where idempotency_key = ?`, [id])).toEqual([{ kind: 'closed', state: 'declined' }]);
        slow.arrive();
        // The late call gets the closed key's refusal: nothing refunded, the refund stays FAILED.
        expect((await answered).data.refundOrder).toMatchObject({ id, status: 'FAILED' });
        expect(await sql(`select kind, state from sandbox_authorization where idempotency_key = ?`, [id])).toEqual([{ kind: 'closed', state: 'declined' }]);
        expect((await orderOf(reference)).amountRefunded).toBe('0.00');
      } finally {
        slow.restore();
        await answered?.catch(() => undefined);
      }
    });

    it('a call that reaches the processor just before its key would be closed is settled from its record, not failed', async () => {
      const reference = await paid();
      const late = landsJustBeforeClose(sandbox(), 'refund');
      try {
        const { id } = (await refund({ reference, amount: '250' })).data.refundOrder;
        await age(id, 180);
        expect(await reconcile()).toBe(1);
        expect((await orderOf(reference)).refunds).toEqual([expect.objectContaining({ id, status: 'SUCCEEDED' })]);
        expect(await sql(`select kind, state from sandbox_authorization where idempotency_key = ?`, [id])).toEqual([{ kind: 'refund', state: 'approved' }]);
      } finally {
        late.restore();
      }
    });
  });
});
