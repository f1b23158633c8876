import { startTestService, type TestService } from '../../support/service';
import { graphql, postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { countStatements, type StatementCount } from '../../support/statement-count';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { orderDetailsView } from '../../../src/orders/order-details.view';
import { orderStatusView } from '../../../src/rest/order.presenters';

/**
 * What order/verify and order/status send to PostgreSQL: counted at the pg driver for one
 * request, after a first request of the same kind has filled the per-instance caches. Each
 * reads what it answers with in one narrow statement (bench/NOTES.md, "REST hot paths"); the
 * answers stay those the complete order (loaded through the entity manager) gives.
 */
describe('statements sent to PostgreSQL by order verify and order status', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let reference: string;
  let plainReference: string;
  let manualLinkId: number;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Read Budget Books' });
    const link = (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Name: 'Read budget link', Description: 'Two tickets', PaymentType: 'MC', AuthOption: 'NOAUTH' },
      })
    ).body.data.paymentLink;
    const create = async (ref: string, paymentLinkId?: number) => {
      const created = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 1500, reference: ref, description: 'Budget', currency: 'NGN' },
        payment: { RedirectUrl: 'https://shop.example.test/back', ...(paymentLinkId ? { paymentLinkId } : {}) },
      });
      expect(created.body.statusCode).toBe('01');
    };
    const manual = await graphql(
      t.baseUrl,
      `
        mutation ($input: CreatePaymentLinkInput!) {
          createPaymentLink(input: $input) {
            id
            captureMethod
          }
        }
      `,
      { input: { name: 'Held tent', description: 'Four-person tent', paymentType: 'MC', currency: 'NGN', authOption: 'NOAUTH', captureMethod: 'MANUAL' } },
      { 'api-key': m.keys.test.privateKey },
    );
    expect(manual.body.data.createPaymentLink.captureMethod).toBe('MANUAL');
    manualLinkId = manual.body.data.createPaymentLink.id;
    createOrder = create;
    reference = `READ-${process.pid}-${Date.now()}`;
    plainReference = `${reference}-PLAIN`;
    await create(reference, link.id);
    await create(plainReference);
    // A settled card payment: the order has a link, a customer, a payment and a card to show.
    expect((await payByCard(reference)).body.statusCode).toBe('00');
  });
  let createOrder: (ref: string, paymentLinkId?: number) => Promise<void>;
  const payByCard = (ref: string) =>
    postEncrypted(t.baseUrl, '/checkout/order/pay', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      reference: ref,
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '39', cvv: '123' },
    });
  afterAll(async () => {
    await t.close();
  });

  const verify = (ref: string) => request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: m.keys.test.privateKey, body: { reference: ref } });
  const status = (ref: string) => postEncrypted(t.baseUrl, '/checkout/order/status', m.keys.test.publicKey, m.keys.test.encryptionKey, { reference: ref });
  /** The complete order as the entity manager loads it (customer, link and type, payments, cards, merchant). */
  const complete = async (ref: string) => {
    const ctx = t.service.runtime.ctx;
    const tenant = await ctx.services.auth.authenticate(m.keys.test.privateKey);
    return ctx.services.orders.getAggregate(tenant, ref, ctx.orm.em.fork());
  };
  const measured = async (work: () => Promise<unknown>): Promise<StatementCount> => {
    await work();
    return countStatements(t.service, work);
  };
  // Columns no part of either answer shows: reading them would mean a wide SELECT again.
  const UNSHOWN = /\b(redirect_url|ip_address|event_sequence|processor_token|processing_started_at|background_image|auth_option)\b/;

  it('answers order/verify from one narrow statement, in no transaction', async () => {
    let answer: Awaited<ReturnType<typeof verify>> | undefined;
    const count = await measured(async () => {
      answer = await verify(reference);
    });
    expect(answer!.body.statusCode).toBe('00');
    expect(count.statements).toHaveLength(1);
    expect(count.transactions).toBe(0);
    expect(count.statements[0]).not.toMatch(UNSHOWN);
  });

  it('answers order/status from one narrow statement of the order alone', async () => {
    let answer: Awaited<ReturnType<typeof status>> | undefined;
    const count = await measured(async () => {
      answer = await status(reference);
    });
    expect(answer!.body.status).toBe('success');
    expect(count.statements).toHaveLength(1);
    expect(count.transactions).toBe(0);
    expect(count.statements[0]).not.toMatch(UNSHOWN);
    expect(count.statements[0]).not.toMatch(/\bjoin\b/i);
  });

  it('answers order/verify with exactly the details of the complete order, link, payment and card included', async () => {
    for (const ref of [reference, plainReference]) {
      const aggregate = await complete(ref);
      const expected = orderDetailsView(aggregate, t.service.runtime.ctx.config.publicUrl);
      const answer = await verify(ref);
      expect(JSON.stringify(answer.body.data)).toBe(JSON.stringify(expected));
    }
    const details = (await verify(reference)).body.data;
    expect(details.orderPayments).toHaveLength(1);
    expect(details.cardDetails).toHaveLength(1);
    expect(details.paymentLink).not.toBeNull();
  });

  it('answers order/status with exactly the record and final-status flags of the complete order', async () => {
    for (const ref of [reference, plainReference]) {
      const aggregate = await complete(ref);
      const { record, extras } = orderStatusView(aggregate.order, aggregate.subsidiary.id);
      const answer = await status(ref);
      expect(JSON.stringify(answer.body.data)).toBe(JSON.stringify(record));
      expect(answer.body).toMatchObject({ is_final_status: extras.isFinalStatus, requery_needed: extras.requeryNeeded, requery_type: extras.requeryType });
    }
    expect((await status(reference)).body).toMatchObject({ is_final_status: true, requery_needed: false });
    expect((await status(plainReference)).body).toMatchObject({ is_final_status: false, requery_needed: true, requery_type: 'status' });
  });

  it('shows an Authorized order (not final) and a Voided one (final) as the complete order does', async () => {
    const held = `${reference}-HELD`;
    const voided = `${reference}-VOID`;
    for (const ref of [held, voided]) {
      await createOrder(ref, manualLinkId);
      expect((await payByCard(ref)).body).toMatchObject({ statusCode: '00', message: 'Order payment authorized' });
    }
    const voidAnswer = await graphql(
      t.baseUrl,
      `
        mutation ($input: VoidOrderInput!) {
          voidOrder(input: $input) {
            status
          }
        }
      `,
      { input: { reference: voided } },
      {
        'api-key': m.keys.test.privateKey,
      },
    );
    expect(voidAnswer.body.data.voidOrder.status).toBe('Voided');
    for (const [ref, statusId, final] of [
      [held, 6, false],
      [voided, 7, true],
    ] as const) {
      const aggregate = await complete(ref);
      const answer = await status(ref);
      expect(JSON.stringify(answer.body.data)).toBe(JSON.stringify(orderStatusView(aggregate.order, aggregate.subsidiary.id).record));
      expect(answer.body).toMatchObject({ is_final_status: final, data: { payment_status: statusId } });
      const details = (await verify(ref)).body.data;
      expect(JSON.stringify(details)).toBe(JSON.stringify(orderDetailsView(aggregate, t.service.runtime.ctx.config.publicUrl)));
      expect(details).toMatchObject({ statusId, status: statusId === 6 ? 'Authorized' : 'Voided' });
    }
  });
});
