import WebSocket from 'ws';
import {
  CheckoutApiError,
  CheckoutClient,
  GraphQLClient,
  GraphQLRequestError,
  blocksFor,
  encryptPayload,
  verifyWebhook,
  WebhookVerificationError,
  type DisputeErrorCode,
  type OrderStatusChange,
  type WebSocketConstructor,
  type CreateOrderRequest,
} from '../../packages/sdk/src';
import { startTestService, type TestService } from '../support/service';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import { EVENTS_ENV, createScratchDatabase, startReceiver, waitFor, type Receiver } from '../integration/events/helpers';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const CARD = { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing };
/** The sandbox approves it after 3-D Secure, then opens a dispute for the full amount. */
const DISPUTED_CARD = { ...CARD, cardNumber: '4000000000000259' };
let counter = 0;

function orderRequest(overrides: { description?: string; amount?: number } = {}): CreateOrderRequest {
  counter += 1;
  return {
    customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada+sdk${counter}@example.test` },
    order: {
      amount: overrides.amount ?? 1000,
      reference: `SDK-${process.pid}-${Date.now()}-${counter}`,
      description: overrides.description ?? 'Coffee beans',
      currency: 'NGN',
    },
    payment: { RedirectUrl: 'https://merchant.test/return' },
  };
}

/** The customer's side of 3-D Secure: open the page the service sent, post the OTP, follow nothing. */
async function authenticate(redirectUrl: string, otp = '123456'): Promise<URL> {
  const page = await fetch(redirectUrl, { redirect: 'manual' });
  expect(page.status).toBe(200);
  const html = await page.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  expect(action).toBeDefined();
  const answer = await fetch(new URL(action!.replace(/&amp;/g, '&'), redirectUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ otp }).toString(),
  });
  expect(answer.status).toBe(303);
  return new URL(answer.headers.get('location')!);
}

/**
 * The merchant SDK against the real service over real HTTP and WebSocket: every REST endpoint,
 * a card payment through 3-D Secure, the signed webhook verified with the SDK, and the GraphQL
 * client. The service runs on a database of this file's own so its webhook dispatcher shares
 * work with no other test file.
 */
describe('the merchant SDK drives the real service', () => {
  let t: TestService;
  let receiver: Receiver;
  let m: CreatedMerchant;
  let client: CheckoutClient;
  /** Made with the private key: links are managed with it only. */
  let server: CheckoutClient;
  let dropDatabase: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const scratch = await createScratchDatabase('sdk');
    dropDatabase = scratch.drop;
    receiver = await startReceiver();
    // The dispute job runs every 200 ms, as it would every few seconds in production.
    t = await startTestService({ ...EVENTS_ENV, DATABASE_URL: scratch.url, WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', DISPUTE_POLL_INTERVAL_MS: '200' });
    m = await createTestMerchant(t, { name: 'SDK Coffee', webhookUrl: receiver.url });
    client = new CheckoutClient({ baseUrl: t.baseUrl, apiKey: m.keys.test.publicKey, encryptionKey: m.keys.test.encryptionKey });
    server = new CheckoutClient({ baseUrl: t.baseUrl, apiKey: m.keys.test.privateKey, encryptionKey: m.keys.test.encryptionKey });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await dropDatabase();
  });

  it('manages payment links and reads the reference lists', async () => {
    const created = await server.createPaymentLink({
      Name: 'Beans',
      Description: '1 kg',
      PaymentType: 'SC',
      Currency: 'NGN',
      AuthOption: 'AUTH',
      Amount: '12500',
    });
    expect(created).toMatchObject({ status: 'success', statusCode: '00', message: 'Payment details fetched successfully' });
    const link = created.data.paymentLink;
    expect(link).toMatchObject({ name: 'Beans', amount: 12500, currency: 'NGN', isActive: true, paymentLinkCode: 'SC' });
    expect(link.paymentLinkUrl.endsWith(link.reference)).toBe(true);
    expect(created.data.subsidiary).toMatchObject({ id: m.subsidiary.id, name: 'SDK Coffee' });

    const edited = await server.editPaymentLink(link.id, { Name: 'Beans, dark roast', Description: '1 kg', PaymentType: 'SC', Amount: 13000 });
    expect(edited.data.paymentLink).toMatchObject({ id: link.id, name: 'Beans, dark roast', amount: 13000 });
    expect(await server.disablePaymentLink(link.id)).toEqual({
      data: null,
      status: 'success',
      statusCode: '00',
      message: 'Payment link status updated successfully',
    });
    expect((await client.listPaymentLinks({ id: link.id }))[0]).toMatchObject({ id: link.id, isActive: false, paymentType: 'Single Charge' });
    await server.activatePaymentLink(link.id);
    expect((await client.listPaymentLinks()).map((l) => [l.id, l.isActive])).toContainEqual([link.id, true]);

    const types = await client.paymentLinkTypes();
    expect(types.paymentLinkTypes.map((x) => x.code)).toEqual(expect.arrayContaining(['SC', 'MC', 'SUB']));
    expect((await client.frequencies()).data.find((f) => f.id === 6)).toMatchObject({ name: 'Monthly', hours: 720, days: 30 });
    expect((await client.banks()).data.length).toBeGreaterThan(0);
  });

  it('answers errors as CheckoutApiError with the code and HTTP status', async () => {
    const unknownLink = await server.disablePaymentLink(999_999_999).catch((e: unknown) => e);
    expect(unknownLink).toBeInstanceOf(CheckoutApiError);
    expect(unknownLink).toMatchObject({ code: '02', status: 404, message: 'payment link not found' });
    await expect(client.orderStatus('NO-SUCH-ORDER')).rejects.toMatchObject({ code: '13', status: 404, message: 'Order not found at the moment' });
    // order/verify needs the private key.
    await expect(client.verifyOrder('NO-SUCH-ORDER')).rejects.toMatchObject({ code: '403', status: 403 });
    await expect(server.createPaymentLink({ Name: '', Description: 'x', PaymentType: 'SC', AuthOption: 'AUTH' })).rejects.toMatchObject({
      code: 'VAL400',
      status: 400,
    });
    // Links are made and changed with the private key only.
    await expect(client.createPaymentLink({ Name: 'x', Description: 'x', PaymentType: 'SC', AuthOption: 'AUTH' })).rejects.toMatchObject({
      code: '403',
      status: 403,
      message: 'This operation requires the private key.',
    });
    const stranger = new CheckoutClient({ baseUrl: t.baseUrl, apiKey: 'PGW-PUBLICKEY-TEST-00000000000000000000000000000000' });
    await expect(stranger.banks()).rejects.toMatchObject({ code: '401', status: 401, message: 'api-key was not passed in the header.' });
  });

  it('replays a request sent again with the same idempotency key', async () => {
    const key = `sdk-${Date.now()}`;
    const body = { Name: 'Once', Description: 'idempotent', PaymentType: 'SC', AuthOption: 'AUTH' } as const;
    const first = await server.createPaymentLink(body, { idempotencyKey: key });
    expect(server.lastResponse).toMatchObject({ status: 200, idempotentReplayed: false });
    const again = await server.createPaymentLink(body, { idempotencyKey: key });
    expect(server.lastResponse).toMatchObject({ status: 200, idempotentReplayed: true });
    expect(again.data.paymentLink.id).toBe(first.data.paymentLink.id);
  });

  it('creates, quotes, tracks, pays (3-D Secure), verifies, and gets the signed webhook it verifies', async () => {
    const input = orderRequest();
    const reference = input.order.reference;
    const created = await client.createOrder(input);
    expect(created).toMatchObject({ status: 'success', statusCode: '01', message: 'Created order successfully' });
    expect(created.data.order).toMatchObject({ reference, amount: 1000, statusId: 1, status: 'Initiated', currency: 'NGN' });

    const fee = await client.orderFee({ amount: 1000, paymentOption: 'C' });
    expect(fee).toMatchObject({ statusCode: '00', message: 'Operation successful' });
    expect(fee.data).toEqual({ fee: 15, amount: 1000, subsidiaryFee: 15, customerFee: 0, totalChargedAmount: 1000, paymentOption: 'C' });

    const initiated = await client.orderStatus(reference);
    expect(initiated).toMatchObject({ is_final_status: false, requery_needed: true, status_code: '00', message: 'Order Status fetched successfully' });
    expect(initiated.data).toMatchObject({ order_reference: reference, payment_status: 1, total_charged_amount: 1000 });

    expect(
      await client.trackOrderEvent({ orderReference: reference, event: 'checkout.opened', description: 'Customer opened the checkout', metadata: { step: 1 } }),
    ).toEqual({ data: null, status: 'success', statusCode: '00', message: 'Event logged successfully' });

    const paid = await client.payOrder({ reference, paymentOption: 'C', country: 'NG', card: CARD });
    expect(paid).toMatchObject({ statusCode: '02', message: 'pending-authenticaion' });
    expect(paid.data.paymentDetail.redirectUrl.startsWith(t.baseUrl)).toBe(true);
    const landed = await authenticate(paid.data.paymentDetail.redirectUrl);
    expect(`${landed.origin}${landed.pathname}`).toBe('https://merchant.test/return');
    expect(Object.fromEntries(landed.searchParams)).toEqual({ reference, status: 'successful' });

    const settled = await client.orderStatus(reference);
    expect(settled).toMatchObject({ is_final_status: true, requery_needed: false });
    expect(settled.data.payment_status).toBe(5);

    const verified = await client.verifyOrder(reference, { apiKey: m.keys.test.privateKey });
    expect(verified).toMatchObject({ statusCode: '00', message: 'Order details fetched successfully' });
    expect(verified.data).toMatchObject({ orderReference: reference, statusId: 5, status: 'Successful', totalAmountCharged: 1000, fee: 15 });
    expect(verified.data.cardDetails[0]).toMatchObject({ cardFirstSixDigits: '512345', cardLastFourDigits: '0008' });

    const hooks = await receiver.waitForCount(1);
    const hook = hooks.find((h) => h.json?.data?.orderReference === reference)!;
    expect(hook).toBeDefined();
    const event = verifyWebhook(hook.body, hook.headers as Record<string, string>, m.webhookSecret, { livemode: false });
    expect(event).toMatchObject({ notify: 'transaction', notifyType: 'successful', eventId: hook.headers['webhook-id'], livemode: false, statusCode: '00' });
    // A test event is signed with the test secret: it never verifies as a live one.
    expect(() => verifyWebhook(hook.body, hook.headers as Record<string, string>, m.liveWebhookSecret)).toThrow(WebhookVerificationError);
    expect(event.data).toEqual(verified.data);
    // The SDK refuses a body that is not byte for byte the signed one, and another merchant's secret.
    expect(() => verifyWebhook(JSON.stringify(hook.json, null, 1), hook.headers as Record<string, string>, m.webhookSecret)).toThrow(WebhookVerificationError);
    const other = await createTestMerchant(t);
    expect(() => verifyWebhook(hook.body, hook.headers as Record<string, string>, other.webhookSecret)).toThrow(WebhookVerificationError);
  });

  it('sends a plaintext longer than one block as several blocks the service accepts', async () => {
    const input = orderRequest({ description: 'A long order description. '.repeat(60) });
    expect(blocksFor(input, m.keys.test.encryptionKey)).toBeGreaterThan(1);
    const created = await client.createOrder(input);
    expect(created.data.order).toMatchObject({ reference: input.order.reference, narration: input.order.description.trim() });
  });

  describe('GraphQLClient', () => {
    let gqlPrivate: GraphQLClient;
    let gqlPublic: GraphQLClient;
    beforeAll(() => {
      gqlPrivate = new GraphQLClient({ baseUrl: t.baseUrl, apiKey: m.keys.test.privateKey, webSocketImpl: WebSocket as unknown as WebSocketConstructor });
      gqlPublic = new GraphQLClient({ baseUrl: t.baseUrl, apiKey: m.keys.test.publicKey, webSocketImpl: WebSocket as unknown as WebSocketConstructor });
    });

    it('creates and pages payment links with typed results', async () => {
      const link = await gqlPrivate.createPaymentLink({
        name: 'Gym',
        description: 'Monthly',
        paymentType: 'SC',
        currency: 'NGN',
        authOption: 'AUTH',
        amount: '5000',
        limit: 10,
      });
      expect(link).toMatchObject({ name: 'Gym', amount: '5000.00', currency: 'NGN', isActive: true, paymentLinkCode: 'SC', limit: 10 });
      const page = await gqlPublic.paymentLinks({ first: 2 });
      expect(page.edges[0]!.node).toEqual(link); // newest first
      expect(page.totalCount).toBeGreaterThanOrEqual(3);
      expect(page.pageInfo.hasNextPage).toBe(true);
      const next = await gqlPublic.paymentLinks({ first: 2, after: page.pageInfo.endCursor! });
      expect(next.edges.map((e) => e.node.id)).not.toContain(link.id);
      const merchant = await gqlPublic.merchant();
      expect(merchant).toMatchObject({ environment: 'TEST', feeBearer: 'MERCHANT', encryptionKey: m.keys.test.encryptionKey });
    });

    it('reads an order and its timeline, streams its status, and reports GraphQL errors with their code', async () => {
      const input = orderRequest();
      const reference = input.order.reference;
      await client.createOrder(input);
      const seen: OrderStatusChange[] = [];
      const errors: unknown[] = [];
      const subscription = gqlPublic.orderStatusChanged(reference, { next: (e) => seen.push(e), error: (e) => errors.push(e) });
      await subscription.ready;
      const services = t.service.runtime.ctx.services;
      const { environmentId } = await services.auth.authenticate(m.keys.test.privateKey);
      await waitFor(() => services.orderStatusBus.subscriberCount(environmentId) === 1, 10_000, 'the subscription registered on the server');
      try {
        const paid = await client.payOrder({ reference, paymentOption: 'C', country: 'NG', card: CARD });
        await authenticate(paid.data.paymentDetail.redirectUrl);
        await waitFor(() => seen.length >= 2, 5000, 'two status changes');
      } finally {
        subscription.unsubscribe();
      }
      expect(errors).toEqual([]);
      expect(seen.map(({ reference: r, statusId, sequence }) => ({ r, statusId, sequence }))).toEqual([
        { r: reference, statusId: 2, sequence: 1 },
        { r: reference, statusId: 5, sequence: 2 },
      ]);

      const order = await gqlPrivate.order(reference);
      expect(order).toMatchObject({
        orderReference: reference,
        amount: '1000.00',
        totalAmountCharged: '1000.00',
        fee: '15.00',
        statusId: 5,
        status: 'Successful',
      });
      expect(order.cardDetails[0]).toMatchObject({ cardFirstSixDigits: '512345', cardLastFourDigits: '0008' });
      const timeline = await gqlPrivate.orderTimeline(reference);
      expect(timeline.length).toBeGreaterThanOrEqual(3);
      expect(timeline.map((e) => e.createdAt)).toEqual([...timeline.map((e) => e.createdAt)].sort());

      const refused = await gqlPrivate.order('NO-SUCH-ORDER').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(GraphQLRequestError);
      expect(refused).toMatchObject({ code: '13', message: 'Order not found at the moment' });
    });

    it('refunds part of a paid order with typed results; the same idempotency key refunds once; the order lists its refunds and balance', async () => {
      const input = orderRequest();
      const reference = input.order.reference;
      await client.createOrder(input);
      const paid = await client.payOrder({ reference, paymentOption: 'C', country: 'NG', card: CARD });
      await authenticate(paid.data.paymentDetail.redirectUrl);

      const refund = await gqlPrivate.refundOrder({ reference, amount: '250.5', reason: 'Damaged', idempotencyKey: `sdk-refund-${reference}` });
      expect(refund).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        orderReference: reference,
        amount: '250.50',
        currency: 'NGN',
        status: 'SUCCEEDED',
        reason: 'Damaged',
        failureReason: null,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      // Sent again with the same key (a retry after a lost answer): the same refund, nothing more refunded.
      expect(await gqlPrivate.refundOrder({ reference, amount: '250.50', reason: 'Damaged', idempotencyKey: `sdk-refund-${reference}` })).toEqual(refund);

      const order = await gqlPrivate.order(reference);
      expect(order).toMatchObject({ amountRefunded: '250.50', amountRefundable: '749.50', refunds: [refund] });

      const tooMuch = await gqlPrivate.refundOrder({ reference, amount: '800' }).catch((e: unknown) => e);
      expect(tooMuch).toBeInstanceOf(GraphQLRequestError);
      expect(tooMuch).toMatchObject({ code: 'REFUND_AMOUNT_INVALID', message: 'The amount must be at most the balance of the order, NGN 749.50.' });
      await expect(gqlPublic.refundOrder({ reference })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      // No amount: all that remains.
      expect(await gqlPrivate.refundOrder({ reference })).toMatchObject({ amount: '749.50', status: 'SUCCEEDED' });
      expect(await gqlPrivate.order(reference)).toMatchObject({ amountRefunded: '1000.00', amountRefundable: '0.00' });
    });

    it('captures part of a held payment and voids another with typed results; a second capture or void is refused with its code', async () => {
      const link = await gqlPrivate.createPaymentLink({
        name: 'Tent',
        description: 'Held until shipped',
        paymentType: 'MC',
        currency: 'NGN',
        authOption: 'NOAUTH',
        amount: '1000',
        captureMethod: 'MANUAL',
      });
      expect(link.captureMethod).toBe('MANUAL');
      // A customer pays the link's hosted page (a card without 3-D Secure): the money is held.
      const held = async () => {
        const res = await fetch(`${t.baseUrl}/pay/${link.reference}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            paymentOption: 'C',
            customer: { firstname: 'Ada', lastname: 'Obi', email: 'ada@example.test', mobile: '+2348012345678', country: 'NG' },
            data: encryptPayload({ card: CARD }, m.keys.test.encryptionKey),
          }),
        });
        expect(res.status).toBe(200);
        return new URL(((await res.json()) as { redirectUrl: string }).redirectUrl).searchParams.get('reference')!;
      };
      const [toCapture, toVoid] = [await held(), await held()];
      expect(await gqlPrivate.order(toCapture)).toMatchObject({ statusId: 6, status: 'Authorized', captureMethod: 'MANUAL', amountAuthorized: '1000.00' });

      const captured = await gqlPrivate.captureOrder({ reference: toCapture, amount: '600', idempotencyKey: 'sdk-capture-1' });
      expect(captured).toMatchObject({ orderReference: toCapture, statusId: 5, status: 'Successful', amount: '600.00', amountAuthorized: '1000.00' });
      // A retry with the key answers the first capture; the key with another amount is refused.
      expect(await gqlPrivate.captureOrder({ reference: toCapture, amount: '600', idempotencyKey: 'sdk-capture-1' })).toEqual(captured);
      await expect(gqlPrivate.captureOrder({ reference: toCapture, amount: '500', idempotencyKey: 'sdk-capture-1' })).rejects.toMatchObject({
        code: 'IDEMPOTENCY_KEY_REUSED',
      });
      await expect(gqlPrivate.captureOrder({ reference: toCapture })).rejects.toMatchObject({ code: 'CAPTURE_NOT_ALLOWED' });

      await expect(gqlPublic.voidOrder({ reference: toVoid })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      const voided = await gqlPrivate.voidOrder({ reference: toVoid, idempotencyKey: 'sdk-void-1' });
      expect(voided).toMatchObject({ orderReference: toVoid, statusId: 7, status: 'Voided' });
      expect(await gqlPrivate.voidOrder({ reference: toVoid, idempotencyKey: 'sdk-void-1' })).toEqual(voided);
      const again = await gqlPrivate.voidOrder({ reference: toVoid }).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(GraphQLRequestError);
      expect(again).toMatchObject({ code: 'VOID_NOT_ALLOWED' });
    });

    it('lists the disputes of payments with the disputed card, wins one with evidence and accepts another; a second answer is refused with its code', async () => {
      const disputedPayment = async () => {
        const input = orderRequest();
        await client.createOrder(input);
        const paid = await client.payOrder({ reference: input.order.reference, paymentOption: 'C', country: 'NG', card: DISPUTED_CARD });
        await authenticate(paid.data.paymentDetail.redirectUrl);
        return input.order.reference;
      };
      const [toWin, toAccept] = [await disputedPayment(), await disputedPayment()];
      // The processor's notices arrive with the dispute job: wait for both disputes to open.
      const all = await waitFor(
        async () => {
          const page = await gqlPrivate.disputes({ status: 'NEEDS_RESPONSE' });
          return page.edges.length === 2 && page.edges.map((e) => e.node);
        },
        10_000,
        'both disputes to open',
      );
      expect(all.map((d) => d.orderReference).sort()).toEqual([toWin, toAccept].sort());
      const won = all.find((d) => d.orderReference === toWin)!;
      expect(won).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        orderReference: toWin,
        amount: '1000.00',
        currency: 'NGN',
        reason: 'fraudulent',
        status: 'NEEDS_RESPONSE',
        evidenceDueBy: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        evidence: null,
        decidedAt: null,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      expect((await gqlPrivate.order(toWin)).disputes).toEqual([won]);

      // One per page, newest first: the cursor leads to the other.
      const first = await gqlPrivate.disputes({ first: 1 });
      expect(first.pageInfo.hasNextPage).toBe(true);
      const second = await gqlPrivate.disputes({ first: 1, after: first.pageInfo.endCursor! });
      expect(second.pageInfo.hasNextPage).toBe(false);
      const paged = [first.edges[0]!.node, second.edges[0]!.node];
      expect(paged.map((d) => d.id).sort()).toEqual(all.map((d) => d.id).sort());
      expect(paged[0]!.createdAt >= paged[1]!.createdAt).toBe(true);

      const answered = await gqlPrivate.submitDisputeEvidence({ id: won.id, text: 'Signed proof of delivery: winning_evidence' });
      expect(answered).toMatchObject({ id: won.id, status: 'UNDER_REVIEW', evidence: 'Signed proof of delivery: winning_evidence', decidedAt: null });
      const again = await gqlPrivate.submitDisputeEvidence({ id: won.id, text: 'More proof' }).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(GraphQLRequestError);
      expect(again).toMatchObject({ code: 'DISPUTE_NOT_OPEN' satisfies DisputeErrorCode });
      await expect(gqlPrivate.acceptDispute(won.id)).rejects.toMatchObject({ code: 'DISPUTE_NOT_OPEN' satisfies DisputeErrorCode });
      const decided = await waitFor(async () => (await gqlPrivate.disputes({ status: 'WON' })).edges[0]?.node, 10_000, 'the dispute to be won');
      expect(decided).toMatchObject({ id: won.id, orderReference: toWin, status: 'WON', decidedAt: expect.any(String) });

      const accepted = await gqlPrivate.acceptDispute(all.find((d) => d.orderReference === toAccept)!.id);
      expect(accepted).toMatchObject({ orderReference: toAccept, status: 'ACCEPTED', decidedAt: expect.any(String) });
      expect((await gqlPrivate.disputes({ status: 'ACCEPTED' })).edges.map((e) => e.node)).toEqual([accepted]);
      // Accepted: the bank keeps the money, so nothing is left to refund.
      expect(await gqlPrivate.order(toAccept)).toMatchObject({ amountRefundable: '0.00', disputes: [accepted] });
      await expect(gqlPrivate.acceptDispute(accepted.id)).rejects.toMatchObject({ code: 'DISPUTE_NOT_OPEN' });

      await expect(gqlPrivate.acceptDispute('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'DISPUTE_NOT_FOUND' });
      await expect(gqlPrivate.submitDisputeEvidence({ id: accepted.id, text: '   ' })).rejects.toMatchObject({ code: 'DISPUTE_EVIDENCE_INVALID' });
      await expect(gqlPublic.disputes()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    });

    it('sets the webhook URL and rotates keys; the SDK works with the new keys and not the old', async () => {
      const own = await createTestMerchant(t);
      const gql = new GraphQLClient({ baseUrl: t.baseUrl, apiKey: own.keys.test.privateKey });
      expect(await gql.setWebhookUrl(receiver.url)).toEqual({ webhookUrl: receiver.url });
      expect(await gql.setWebhookUrl(null)).toEqual({ webhookUrl: null });

      const rotated = await gql.rotateKeys({ keys: ['PUBLIC', 'ENCRYPTION'], graceSeconds: 0 });
      expect(rotated.publicKey).toMatch(/^PGW-PUBLICKEY-TEST-/);
      expect(rotated.encryptionKey).not.toBe(own.keys.test.encryptionKey);
      const input = orderRequest();
      const fresh = new CheckoutClient({ baseUrl: t.baseUrl, apiKey: rotated.publicKey!, encryptionKey: rotated.encryptionKey! });
      expect((await fresh.createOrder(input)).statusCode).toBe('01');
      const stale = new CheckoutClient({ baseUrl: t.baseUrl, apiKey: own.keys.test.publicKey, encryptionKey: own.keys.test.encryptionKey });
      await expect(stale.orderStatus(input.order.reference)).rejects.toMatchObject({ code: '401', status: 401 });
      const staleKey = new CheckoutClient({ baseUrl: t.baseUrl, apiKey: rotated.publicKey!, encryptionKey: own.keys.test.encryptionKey });
      await expect(staleKey.orderStatus(input.order.reference)).rejects.toMatchObject({ code: '400', status: 400 });
    });
  });
});
