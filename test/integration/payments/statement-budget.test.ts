import { startTestService, type TestService } from '../../support/service';
import { graphql, postEncrypted, request } from '../../support/http';
import { encryptPayload } from '../../support/payload-client';
import { createTestMerchant } from '../../support/merchants';
import { countStatements, type StatementCount } from '../../support/statement-count';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

/**
 * How many statements and transactions the money path sends to PostgreSQL: counted at the pg
 * driver for one request, after a first request of the same kind has filled the per-instance
 * caches. The sandbox processor's own statements (its table stands in for the acquirer) are
 * counted apart. Exact counts, statement by statement (src/payments/payment.queries.ts): a pay's
 * attempt is one read and one guarded write that answers the rows written, and its settlement one
 * guarded write from those rows; a 3-D Secure page's answer likewise. A change adding a round trip, or sending the common
 * path back through the entity manager, fails here. docs/performance.md
 * ("The money path") gives the counts and the throughput.
 */
/** A write guarded by what was read: the order locked first, nothing written unless the rows are as read (row versions). */
const guarded = (writes: string) =>
  new RegExp(`^with o as \\(select id from checkout_order where id = \\$1::int and xmin = \\$\\d+::xid for update\\)[\\s\\S]*${writes}`);
const ATTEMPT_WRITE = guarded('insert into order_payment as wp');
const SETTLEMENT_WRITE = guarded('insert into outbox_event');
const RESUME_WRITE = guarded('update order_payment wp set status_id');
const ATTEMPT_READ = /^with o as \(\s*select .* from checkout_order o where o\.environment_id = \$1::int and o\.reference = \$2::varchar\s*\), l as/s;
const RESUME_READ = /^with target as \(select id, order_id from order_payment where reference = \$1::varchar\)(?![\s\S]*for update)/;
/**
 * A card pay: the attempt (order, link and the order's payments read; payment, card, timeline and
 * order written by one guarded statement that answers the rows written), then, after the
 * processor call, its settlement from those rows (one guarded write). Each write is its own
 * transaction; no lock is held between a read and its write.
 */
const PAY = { statements: [ATTEMPT_READ, ATTEMPT_WRITE, SETTLEMENT_WRITE], transactions: 2 };
/**
 * The 3-D Secure page's answer: the attempt read and resumed (one guarded write of order and
 * payment, answering them), then, after the processor call, settled from those rows (one guarded
 * write); then the page claims the way back to the merchant (one statement, its own transaction).
 */
const THREE_DS_COMPLETION = {
  statements: [RESUME_READ, RESUME_WRITE, SETTLEMENT_WRITE, /^update "order_payment" set "returned_to_merchant_at"/],
  transactions: 3,
};

/**
 * A refund: one transaction of the order locked, what decides the refund read after the lock
 * (balance, open disputes, the payment's token, the key's earlier refund), the refund written with
 * its timeline entry, the audit entry; then, after the processor call, its settlement in one
 * statement guarded by the refund still being PENDING (with the timeline entry and the outbox event).
 */
const REFUND = {
  statements: [
    /^begin$/,
    /^select o\.id, o\.reference, o\.status_id, o\.currency, o\.processor_reference from checkout_order o\s+where o\.environment_id = \$1::int and o\.reference = \$2::varchar for update$/,
    /^select o\.total_charged_amount - /,
    /^with written as \(\s*insert into refund as r/,
    /^insert into audit_entry /,
    /^commit$/,
    /^with settled as \(\s*update refund set status = \$2::text[\s\S]*where id = \$1::uuid and status = 'PENDING'/,
  ],
  transactions: 2,
};
/**
 * A capture or void of an Authorized order (src/payments/authorization.queries.ts): the order read
 * without locks with what its event shows (and the key's earlier action); the claim from those
 * rows, one statement with no transaction (the order and its payment locked and checked unchanged,
 * the pending action inserted unless one is pending); after the processor call, the settlement
 * from the same rows in one statement with no transaction (the action, order, payment, timeline,
 * outbox event, delivery, NOTIFY and audit entry), written only while the order and payment are
 * still those rows and the action is pending. The answer is the order as written, not read again.
 */
const PEEK =
  /^with o as \(\s*select [\s\S]* where o\.environment_id = \$1::int and o\.reference = \$2::varchar\s*\), p as \((?![\s\S]*for update)[\s\S]*from \(select 1\) one left join o on true/;
const CLAIM =
  /^with g as \(select id from checkout_order where id = \$1::int and xmin = \$11::xid for update\),\s*gp as \(.* for update\),\s*ins as \(\s*insert into authorization_action [\s\S]*on conflict do nothing/;
const SETTLEMENT =
  /^with g as \(select id from checkout_order where id = \$6::int and \(not \$7::boolean or xmin = \$53::xid\) for update\),\s*gp as \(.* for update\),\s*lk as \(.* for share\), act as \(\s*update authorization_action set state[\s\S]*audit as \(\s*insert into audit_entry/;
const CAPTURE = { statements: [PEEK, CLAIM, SETTLEMENT], transactions: 2 };

describe('statements sent to PostgreSQL by the money path', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    // Caches that outlive the file: each count follows a warm-up of its own kind, but with the
    // default 5 s safety TTL a cache filled by an earlier test could expire between a warm-up that
    // still hit it and the request counted (the 3-D Secure count read the webhook URL again).
    t = await startTestService({ TENANT_CACHE_TTL_MS: '600000' });
    m = await createTestMerchant(t, { name: 'Budget Books' });
  });
  afterAll(async () => {
    await t.close();
  });

  const card = { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '39', cvv: '123' };
  let counter = 0;
  const createOrder = async (paymentLinkId?: number) => {
    const reference = `BUDGET-${Date.now()}-${(counter += 1)}`;
    const created = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1500, reference, description: 'Budget', currency: 'NGN' },
      payment: { RedirectUrl: 'https://shop.example.test/back', ...(paymentLinkId ? { paymentLinkId } : {}) },
    });
    expect(created.body.statusCode).toBe('01');
    return reference;
  };
  const pay = (reference: string) =>
    postEncrypted(t.baseUrl, '/checkout/order/pay', m.keys.test.publicKey, m.keys.test.encryptionKey, { reference, paymentOption: 'C', country: 'NG', card });
  /** A payment link of the merchant (NOAUTH: a pay settles in its own request). */
  const createLink = async (body: Record<string, unknown>) =>
    (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Description: 'd', AuthOption: 'NOAUTH', PaymentType: 'MC', ...body },
      })
    ).body.data.paymentLink;
  // Off budget, the failure lists the statements sent.
  const expectExactly = (count: StatementCount, budget: { statements: RegExp[]; transactions: number }) => {
    const matches = count.statements.length === budget.statements.length && count.statements.every((text, i) => budget.statements[i]!.test(text));
    expect({ statements: matches ? 'as budgeted' : count.statements, transactions: count.transactions }).toEqual({
      statements: 'as budgeted',
      transactions: budget.transactions,
    });
  };

  it("settles a card pay on a NOAUTH link in exactly 3 statements: a read, the attempt's guarded write, the settlement's guarded write", async () => {
    const link = await createLink({ Name: 'Budget link' });
    const [warm, measured] = [await createOrder(link.id), await createOrder(link.id)];
    expect((await pay(warm)).body.statusCode).toBe('00');

    let answer: Awaited<ReturnType<typeof pay>> | undefined;
    const count = await countStatements(t.service, async () => {
      answer = await pay(measured);
    });
    expect(answer!.body).toMatchObject({ statusCode: '00', message: 'Order payment successful' });
    expect(count.processorStatements.length).toBeGreaterThan(0);
    expectExactly(count, PAY);
  });

  it("refunds a paid order in 5 statements and 2 transactions: the request's lock, read and writes, then the settlement's guarded write", async () => {
    const link = await createLink({ Name: 'Budget link for refunds' });
    const reference = await createOrder(link.id);
    expect((await pay(reference)).body.statusCode).toBe('00');
    const refund = async (amount: string) =>
      (
        await graphql(
          t.baseUrl,
          'mutation ($input: RefundOrderInput!) { refundOrder(input: $input) { id amount status } }',
          { input: { reference, amount } },
          { 'api-key': m.keys.test.privateKey },
        )
      ).body;
    expect((await refund('100')).data.refundOrder.status).toBe('SUCCEEDED'); // warm
    let answer: Awaited<ReturnType<typeof refund>> | undefined;
    const count = await countStatements(t.service, async () => {
      answer = await refund('200');
    });
    expect(answer!.data.refundOrder).toMatchObject({ amount: '200.00', status: 'SUCCEEDED' });
    expect(count.processorStatements.length).toBeGreaterThan(0);
    expectExactly(count, REFUND);
  });

  it('creates an order on a payment link in 1 statement, the link kept as read; a link changed since is read again before the order is written', async () => {
    const link = await createLink({ Name: 'Budget link for creates' });
    await createOrder(link.id); // warm: caches filled, statements prepared, the link kept
    const LINK_READ =
      /^select .* from payment_link l join payment_link_type t on t\.id = l\.type_id\s+where l\.id = \$1::int and l\.environment_id = \$2::int$/s;
    const ORDER_WRITE = /^with link_as_read as \(/;
    expectExactly(await countStatements(t.service, () => createOrder(link.id)), { statements: [ORDER_WRITE], transactions: 1 });
    // The link edited (here by a write the service does not see): the guarded write writes nothing, the link is read again, the order written.
    await t.service.runtime.ctx.orm.em.getConnection().execute(`update payment_link set description = description || '.' where id = ?`, [link.id]);
    expectExactly(await countStatements(t.service, () => createOrder(link.id)), { statements: [ORDER_WRITE, LINK_READ, ORDER_WRITE], transactions: 2 });
    expectExactly(await countStatements(t.service, () => createOrder(link.id)), { statements: [ORDER_WRITE], transactions: 1 });
    // A subscription link's orders also read their frequency: 2.
    const subscription = await createLink({ Name: 'Budget subscription', PaymentType: 'SUB', Amount: 1500, FrequencyId: 3, NumberOfPayments: 4 });
    await createOrder(subscription.id);
    const FREQUENCY_READ = /^select .* from frequency f where f\.id = \$1::int and f\.is_active$/s;
    expectExactly(await countStatements(t.service, () => createOrder(subscription.id)), {
      statements: [FREQUENCY_READ, ORDER_WRITE],
      transactions: 1,
    });
  });

  it('reads nothing on a second connection while its transactions are open, even with every tenant cache cold', async () => {
    // TENANT_CACHE_TTL_MS=0: no per-instance cache, so fee settings, merchant record, webhook URL
    // are read on every pay. Read inside a transaction, each must use that transaction's own
    // connection (or come before it): a second pooled connection can be held by pays waiting for
    // this one's locks.
    const cold = await startTestService({ TENANT_CACHE_TTL_MS: '0' });
    try {
      const cm = await createTestMerchant(cold, { name: 'Cold Books', webhookUrl: 'https://hooks.example.test/cold' });
      const link = (
        await request(cold.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: cm.keys.test.privateKey,
          body: { Name: 'Cold link', Description: 'd', PaymentType: 'MC', AuthOption: 'NOAUTH' },
        })
      ).body.data.paymentLink;
      const reference = `COLD-${Date.now()}`;
      const created = await postEncrypted(cold.baseUrl, '/checkout/order/create', cm.keys.test.publicKey, cm.keys.test.encryptionKey, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 1500, reference, description: 'Cold', currency: 'NGN' },
        payment: { RedirectUrl: 'https://shop.example.test/back', paymentLinkId: link.id },
      });
      expect(created.body.statusCode).toBe('01');
      let answer: Awaited<ReturnType<typeof postEncrypted>> | undefined;
      const count = await countStatements(cold.service, async () => {
        answer = await postEncrypted(cold.baseUrl, '/checkout/order/pay', cm.keys.test.publicKey, cm.keys.test.encryptionKey, {
          reference,
          paymentOption: 'C',
          country: 'NG',
          card,
        });
      });
      expect(answer!.body.statusCode).toBe('00');
      expect(count.transactions).toBe(2);
      expect(count.besideOpenTransaction).toEqual([]);
    } finally {
      await cold.close();
    }
  });

  it("settles a 3-D Secure completion in exactly 3 statements (a read, the resume's guarded write, the settlement's guarded write), then the page claims the way back in 1", async () => {
    const complete = async (reference: string) => {
      const paid = await pay(reference);
      expect(paid.body.statusCode).toBe('02');
      return paid.body.data.paymentDetail.redirectUrl as string;
    };
    const otp = (url: string) =>
      fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'otp=123456' });
    expect((await otp(await complete(await createOrder()))).status).toBe(303);

    const url = await complete(await createOrder());
    let answer: Response | undefined;
    const count = await countStatements(t.service, async () => {
      answer = await otp(url);
    });
    expect(answer!.status).toBe(303);
    expect(new URL(answer!.headers.get('location')!).searchParams.get('status')).toBe('successful');
    expect(count.processorStatements.length).toBeGreaterThan(0);
    expectExactly(count, THREE_DS_COMPLETION);
  });

  it("captures and voids an Authorized order in 3 statements each (a read, the claim's and the settlement's guarded writes, each its own transaction), answering the order as written", async () => {
    const gql = async (query: string, variables: Record<string, unknown>) =>
      (await graphql(t.baseUrl, query, variables, { 'api-key': m.keys.test.privateKey })).body;
    const FIELDS = `orderReference statusId status amount totalAmountCharged fee orderPayments { statusId status }`;
    const CAPTURE_ORDER = `mutation ($input: CaptureOrderInput!) { captureOrder(input: $input) { ${FIELDS} } }`;
    const VOID_ORDER = `mutation ($input: VoidOrderInput!) { voidOrder(input: $input) { ${FIELDS} } }`;
    const link = (
      await gql(`mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { reference } }`, {
        input: { name: 'Held tent', description: 'd', paymentType: 'MC', currency: 'NGN', authOption: 'NOAUTH', amount: '1000', captureMethod: 'MANUAL' },
      })
    ).data.createPaymentLink as { reference: string };
    // A customer pays the MANUAL link's hosted page: the order is Authorized.
    const authorized = async () => {
      const res = await request(t.baseUrl, 'POST', `/pay/${link.reference}`, {
        body: {
          paymentOption: 'C',
          customer: { firstname: 'Ada', lastname: 'Obi', email: 'ada@example.test', mobile: '+2348012345678', country: 'NG' },
          data: encryptPayload({ card }, m.keys.test.encryptionKey),
        },
      });
      const landed = new URL(res.body.redirectUrl);
      expect(landed.searchParams.get('status')).toBe('authorized');
      return landed.searchParams.get('reference')!;
    };
    const measure = async (query: string, input: Record<string, unknown>, field: string) => {
      expect((await gql(query, { input: { ...input, reference: await authorized() } })).errors).toBeUndefined(); // warm
      const reference = await authorized();
      let answer: { data: Record<string, unknown>; errors?: unknown } | undefined;
      const count = await countStatements(t.service, async () => {
        answer = await gql(query, { input: { ...input, reference } });
      });
      expect(answer!.errors).toBeUndefined();
      // The answer is the order as order(reference) shows it.
      const shown = await gql(`query ($reference: String!) { order(reference: $reference) { ${FIELDS} } }`, { reference });
      expect(answer!.data[field]).toEqual(shown.data.order);
      // The webhook's body is the order as order/verify shows it.
      const [event] = await t.service.runtime.ctx.orm.em
        .getConnection()
        .execute(`select e.payload from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? order by e.sequence desc limit 1`, [
          reference,
        ]);
      const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: m.keys.test.privateKey, body: { reference } });
      expect(event.payload.data).toEqual(verify.body.data);
      expect(count.processorStatements.length).toBeGreaterThan(0);
      return count;
    };
    const capture = await measure(CAPTURE_ORDER, { amount: '600.00' }, 'captureOrder');
    expectExactly(capture, CAPTURE);
    expectExactly(await measure(VOID_ORDER, {}, 'voidOrder'), CAPTURE);
  });
});
