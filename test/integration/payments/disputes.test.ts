import { graphql } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { addMember, signInMember } from '../../support/members';
import { usePaidOrdersService } from '../../support/paid-orders-service';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { FastifyBaseLogger } from 'fastify';
import type { SandboxProcessor } from '../../../src/payments/sandbox/sandbox.processor';
import { DisputeJobs } from '../../../src/payments/dispute-jobs';
import type { DisputeSteps } from '../../../src/payments/dispute-steps';
import type { DisputeNotice, PaymentProcessor } from '../../../src/payments/processor';
import { sleep, verifiesIndependently, waitFor } from '../events/helpers';
import { encryptPayload } from '../../support/payload-client';

const DISPUTE_FIELDS = 'id orderReference amount currency reason status evidenceDueBy evidence decidedAt createdAt updatedAt';
const ORDER = `query ($reference: String!) { order(reference: $reference) { status totalAmountCharged amountRefunded disputes { ${DISPUTE_FIELDS} } } }`;
const DISPUTES = `query ($first: Int, $after: String, $status: DisputeStatus) {
  disputes(first: $first, after: $after, status: $status) { edges { cursor node { id orderReference amount status } } pageInfo { hasNextPage endCursor } }
}`;
const EVIDENCE = `mutation ($input: SubmitDisputeEvidenceInput!) { submitDisputeEvidence(input: $input) { ${DISPUTE_FIELDS} } }`;
const ACCEPT = `mutation ($id: ID!) { acceptDispute(id: $id) { ${DISPUTE_FIELDS} } }`;
const CREATE_ORDER = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }`;
const PAY_ORDER = `mutation ($input: PayOrderInput!) { payOrder(input: $input) { redirectUrl final } }`;
const REFUND = `mutation ($input: RefundOrderInput!) { refundOrder(input: $input) { id amount status } }`;
const DISPUTED_CARD = '4000000000000259';
/** A card the sandbox approves and files no dispute for: the test's own processor brings the notices. */
const UNDISPUTED_CARD = '5123450000000008';

/**
 * Disputes against the real service on PostgreSQL (a database of this file's own: the dispute
 * job and the webhook dispatcher act on every row they find), with the dispute job running every
 * 200 ms as it would every few seconds in production.
 */
describe('disputes', () => {
  const file = usePaidOrdersService({ database: 'disputes', env: { DISPUTE_POLL_INTERVAL_MS: '200' }, referencePrefix: 'DP', card: DISPUTED_CARD });
  const { services, sql, gql, codeOf, paid, timelineOf, hookedMerchant } = file;
  const orderOf = async (reference: string, apiKey?: string) => (await gql(ORDER, { reference }, apiKey)).data.order;
  /** The order's one dispute, once the processor's notice of it was applied (within 10 s, the sandbox promises). */
  const disputeOf = async (reference: string, apiKey?: string) =>
    waitFor(async () => (await orderOf(reference, apiKey)).disputes[0], 10_000, `the dispute of ${reference}`);
  const statusBecomes = (reference: string, status: string, apiKey?: string) =>
    waitFor(async () => (await orderOf(reference, apiKey)).disputes.find((d: any) => d.status === status), 10_000, `${reference} ${status}`);
  const evidence = (id: string, text: string, apiKey?: string) => gql(EVIDENCE, { input: { id, text } }, apiKey);
  const refund = (reference: string, amount?: string, apiKey?: string) => gql(REFUND, { input: { reference, amount } }, apiKey);
  /**
   * The service's own dispute job, handed `processor` in place of the sandbox (its notices are the
   * test's); with `hold`, each step it records awaits it first, in the step's transaction.
   */
  const jobsWith = (processor: PaymentProcessor, hold?: () => Promise<void>) => {
    const own = services().disputeJobs as unknown as { orm: never; steps: DisputeSteps; clock: never; wakeWebhooks: never };
    const steps = hold
      ? ({ record: async (...args: Parameters<DisputeSteps['record']>) => (await hold(), own.steps.record(...args)) } as unknown as DisputeSteps)
      : own.steps;
    return new DisputeJobs(own.orm, { test: processor, live: null }, steps, own.clock, own.wakeWebhooks);
  };
  /** A processor of the test's own, with the service's dispute job over it: the notices the test gives it, and those acknowledged. */
  const ownProcessor = (hold?: () => Promise<void>) => {
    const notices: DisputeNotice[] = [];
    const acknowledged: string[] = [];
    const processor = {
      disputeNotices: async () => notices.splice(0),
      acknowledgeDisputeNotice: async (reference: string, status: string) => void acknowledged.push(`${reference}:${status}`),
    } as unknown as PaymentProcessor;
    return { notices, acknowledged, jobs: jobsWith(processor, hold) };
  };
  /** A notice that a dispute of the order `reference` opened, for its full amount in NGN unless told otherwise. */
  const openingOf = async (reference: string, dispute: string, fields: Partial<DisputeNotice> = {}): Promise<DisputeNotice> => {
    const [order] = await sql(`select processor_reference from checkout_order where reference = ?`, [reference]);
    return {
      reference: `${dispute}-${process.pid}-${Date.now()}`,
      orderReference: order!.processor_reference,
      amount: '1000.00',
      currency: 'NGN',
      reason: 'fraudulent',
      evidenceDueBy: new Date(Date.now() + 7 * 86_400_000),
      status: 'needs_response',
      ...fields,
    };
  };
  let ordered = 0;
  /**
   * A new order of the file's merchant for NGN 1,000 (AUTOMATIC unless told MANUAL), left Initiated
   * or paid with `card` through 3-D Secure: its reference.
   */
  const orderIn = async (options: { card?: string; captureMethod?: 'MANUAL' } = {}) => {
    const reference = `DP-STATE-${process.pid}-${Date.now()}-${++ordered}`;
    const customer = { firstname: 'Ada', lastname: 'Obi', country: 'NG', email: `ada+${ordered}@example.test` };
    const created = await gql(CREATE_ORDER, {
      input: { customer, amount: '1000', reference, redirectUrl: 'https://merchant.test/return', captureMethod: options.captureMethod },
    });
    expect(created.errors).toBeUndefined();
    if (options.card === undefined) return reference;
    const billingAddress = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
    const card = { cardNumber: options.card, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress };
    const encryptedPayload = encryptPayload({ card }, file.m.keys.test.encryptionKey);
    const paying = await gql(PAY_ORDER, { input: { reference, paymentOption: 'C', country: 'NG', encryptedPayload } });
    expect(paying.errors).toBeUndefined();
    if (!paying.data.payOrder.final)
      await fetch(paying.data.payOrder.redirectUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'otp=123456',
      });
    return reference;
  };
  /** What the periodic run of `jobs` logs at warn, once `notices` were given to it. */
  const warningsOf = async (jobs: DisputeJobs, count: number) => {
    const warnings: Array<Record<string, unknown>> = [];
    const log = { warn: (fields: Record<string, unknown>) => warnings.push(fields), info() {}, error() {} } as unknown as FastifyBaseLogger;
    jobs.start(20, log);
    try {
      await waitFor(async () => warnings.length >= count, 5_000, 'the warnings of the notices');
    } finally {
      await jobs.stop();
    }
    return warnings;
  };
  const auditOf = (merchant: CreatedMerchant, action: string) =>
    sql(`select action, actor_type, actor_label, target from audit_entry where subsidiary_id = ? and action = ? order by id`, [merchant.subsidiary.id, action]);

  it('a payment with 4000000000000259 is approved, then a dispute opens for the full amount: fraudulent, NEEDS_RESPONSE, seven days to answer', async () => {
    const reference = await paid();
    const order = await orderOf(reference);
    expect(order.status).toBe('Successful');
    const dispute = await disputeOf(reference);
    expect(dispute).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      orderReference: reference,
      amount: order.totalAmountCharged,
      currency: 'NGN',
      reason: 'fraudulent',
      status: 'NEEDS_RESPONSE',
      evidenceDueBy: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      evidence: null,
      decidedAt: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const days = (Date.parse(dispute.evidenceDueBy) - Date.parse(dispute.createdAt)) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.1);
    expect(await timelineOf(reference)).toContain('dispute.opened');
    // The order stays Successful: legacy clients know no other outcome of a paid order.
    expect((await orderOf(reference)).status).toBe('Successful');
  });

  it('a payment with another card opens no dispute', async () => {
    const reference = await paid(file.m, '5123450000000008');
    const disputed = await paid();
    await disputeOf(disputed);
    // The job has run since the other payment was approved: still no dispute on it.
    expect((await orderOf(reference)).disputes).toEqual([]);
  });

  it('refuses a refund while the dispute needs a response or is under review; a won dispute gives the balance back', async () => {
    const reference = await paid();
    const dispute = await disputeOf(reference);
    const refused = await refund(reference, '10');
    expect(codeOf(refused)).toBe('REFUND_NOT_ALLOWED');
    expect(refused.errors[0].message).toMatch(/dispute/);

    const answered = await evidence(dispute.id, 'Signed delivery receipt attached: winning_evidence');
    expect(answered.errors).toBeUndefined();
    expect(answered.data.submitDisputeEvidence).toMatchObject({
      id: dispute.id,
      status: 'UNDER_REVIEW',
      evidence: 'Signed delivery receipt attached: winning_evidence',
      decidedAt: null,
    });
    const won = await statusBecomes(reference, 'WON');
    expect(won.decidedAt).toEqual(expect.any(String));
    expect(await timelineOf(reference)).toEqual(expect.arrayContaining(['dispute.opened', 'dispute.evidence_submitted', 'dispute.won']));
    expect(await auditOf(file.m, 'dispute.evidence_submitted')).toContainEqual({
      action: 'dispute.evidence_submitted',
      actor_type: 'API_KEY',
      actor_label: expect.any(String),
      target: `dispute ${dispute.id} of order ${reference} for NGN 1,000.00`,
    });
    // Won: the whole balance is the merchant's again.
    expect((await refund(reference)).data.refundOrder).toMatchObject({ amount: '1000.00', status: 'SUCCEEDED' });
  });

  it('any other evidence loses the dispute: its amount leaves the balance and a refund of more than what remains is refused', async () => {
    const reference = await paid();
    const dispute = await disputeOf(reference);
    expect((await evidence(dispute.id, 'We shipped it, honestly.')).data.submitDisputeEvidence.status).toBe('UNDER_REVIEW');
    // Under review: still no refund.
    expect(codeOf(await refund(reference, '1'))).toBe('REFUND_NOT_ALLOWED');
    await statusBecomes(reference, 'LOST');
    expect(await timelineOf(reference)).toContain('dispute.lost');
    // The whole amount was taken back by the bank: nothing is left to refund.
    expect(codeOf(await refund(reference, '0.01'))).toBe('REFUND_AMOUNT_INVALID');
    expect(codeOf(await refund(reference))).toBe('REFUND_AMOUNT_INVALID');
    expect((await orderOf(reference)).amountRefunded).toBe('0.00');
    // Decided: no more answers.
    expect(codeOf(await evidence(dispute.id, 'More evidence: winning_evidence'))).toBe('DISPUTE_NOT_OPEN');
    expect(codeOf(await gql(ACCEPT, { id: dispute.id }))).toBe('DISPUTE_NOT_OPEN');
  });

  it('accepting a dispute makes it ACCEPTED at once, takes its amount off the balance, and is audited', async () => {
    const reference = await paid();
    const dispute = await disputeOf(reference);
    const accepted = await gql(ACCEPT, { id: dispute.id });
    expect(accepted.errors).toBeUndefined();
    expect(accepted.data.acceptDispute).toMatchObject({ id: dispute.id, status: 'ACCEPTED', decidedAt: expect.any(String), evidence: null });
    expect(codeOf(await refund(reference, '0.01'))).toBe('REFUND_AMOUNT_INVALID');
    expect(await timelineOf(reference)).toContain('dispute.accepted');
    expect((await auditOf(file.m, 'dispute.accepted')).map((a: any) => a.target)).toContain(`dispute ${dispute.id} of order ${reference} for NGN 1,000.00`);
    // Once accepted, nothing moves it: neither a second answer nor the processor's notice of it.
    expect(codeOf(await gql(ACCEPT, { id: dispute.id }))).toBe('DISPUTE_NOT_OPEN');
    expect(codeOf(await evidence(dispute.id, 'winning_evidence'))).toBe('DISPUTE_NOT_OPEN');
    await waitFor(async () => (await sql(`select acknowledged from sandbox_dispute where acknowledged = 'accepted'`)).length > 0, 10_000, 'the notice');
    expect((await orderOf(reference)).disputes.map((d: any) => d.status)).toEqual(['ACCEPTED']);
  });

  it('sends the signed dispute webhooks (opened, won, lost, accepted), their data the dispute as GraphQL shows it', async () => {
    const { receiver: r, merchant: hooked } = await hookedMerchant();
    const key = hooked.keys.test.privateKey;
    const [toWin, toLose, toAccept] = [await paid(hooked), await paid(hooked), await paid(hooked)];
    const opened = await Promise.all([toWin, toLose, toAccept].map((reference) => disputeOf(reference, key)));
    await gql(EVIDENCE, { input: { id: opened[0].id, text: 'winning_evidence' } }, key);
    await gql(EVIDENCE, { input: { id: opened[1].id, text: 'nothing useful' } }, key);
    await gql(ACCEPT, { id: opened[2].id }, key);
    await statusBecomes(toWin, 'WON', key);
    await statusBecomes(toLose, 'LOST', key);
    // Three payments, three disputes opened, two decided, one accepted.
    const received = await r.waitForCount(9);
    const hooks = received.filter((h) => h.json.notify === 'dispute');
    expect(hooks.map((h) => `${h.json.data.orderReference} ${h.json.notifyType}`).sort()).toEqual(
      [`${toWin} opened`, `${toLose} opened`, `${toAccept} opened`, `${toWin} won`, `${toLose} lost`, `${toAccept} accepted`].sort(),
    );
    for (const hook of hooks) {
      expect(verifiesIndependently(hooked.webhookSecret, hook.headers, hook.body)).toBe(true);
      expect(hook.headers['webhook-id']).toBe(hook.json.eventId);
      expect(Object.keys(hook.json)).toEqual(['notify', 'notifyType', 'eventId', 'livemode', 'data']);
      expect(hook.json.livemode).toBe(false);
    }
    const openedHook = hooks.find((h) => h.json.notifyType === 'opened' && h.json.data.orderReference === toAccept)!;
    expect(openedHook.json.data).toEqual({ ...opened[2] });
    const now = (await orderOf(toWin, key)).disputes[0];
    expect(hooks.find((h) => h.json.notifyType === 'won')!.json.data).toEqual(now);
  });

  it('lists the disputes newest first, a page at a time, narrowed by status, and only those of the caller', async () => {
    const fresh = await createTestMerchant(file.t);
    const key = fresh.keys.test.privateKey;
    const references = [await paid(fresh), await paid(fresh), await paid(fresh)];
    const disputes = [];
    for (const reference of references) disputes.push(await disputeOf(reference, key));
    await gql(ACCEPT, { id: disputes[1].id }, key);

    const first = (await gql(DISPUTES, { first: 2 }, key)).data.disputes;
    const byCreation = [...disputes].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id)).map((d) => d.id);
    expect(first.edges.map((e: any) => e.node.id)).toEqual(byCreation.slice(0, 2));
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await gql(DISPUTES, { first: 2, after: first.pageInfo.endCursor }, key)).data.disputes;
    expect(second.edges.map((e: any) => e.node.id)).toEqual(byCreation.slice(2));
    expect(second.pageInfo.hasNextPage).toBe(false);

    const accepted = (await gql(DISPUTES, { status: 'ACCEPTED' }, key)).data.disputes.edges.map((e: any) => e.node);
    expect(accepted).toEqual([{ id: disputes[1].id, orderReference: references[1], amount: '1000.00', status: 'ACCEPTED' }]);
    const open = (await gql(DISPUTES, { status: 'NEEDS_RESPONSE' }, key)).data.disputes.edges.map((e: any) => e.node.id);
    expect(open.sort()).toEqual([disputes[0].id, disputes[2].id].sort());

    expect(codeOf(await gql(DISPUTES, { after: 'not-a-cursor' }, key))).toBe('VAL400');
    expect(codeOf(await gql(DISPUTES, { status: 'OPEN' }, key))).toBeDefined();
    // Another merchant sees none of them, and cannot answer them.
    const other = await createTestMerchant(file.t);
    expect((await gql(DISPUTES, {}, other.keys.test.privateKey)).data.disputes.edges).toEqual([]);
    expect(codeOf(await gql(ACCEPT, { id: disputes[0].id }, other.keys.test.privateKey))).toBe('DISPUTE_NOT_FOUND');
  });

  it('lets SUPPORT members answer disputes, VIEWER members only read them, and refuses the public key', async () => {
    const fresh = await createTestMerchant(file.t);
    const [one, two] = [await paid(fresh), await paid(fresh)];
    const first = await disputeOf(one, fresh.keys.test.privateKey);
    const second = await disputeOf(two, fresh.keys.test.privateKey);
    const viewer = await signInMember(
      file.t.baseUrl,
      await addMember(file.t.baseUrl, fresh.keys.test.privateKey, `viewer-${fresh.subsidiary.id}@team.test`, 'VIEWER'),
    );
    const support = await signInMember(
      file.t.baseUrl,
      await addMember(file.t.baseUrl, fresh.keys.test.privateKey, `support-${fresh.subsidiary.id}@team.test`, 'SUPPORT'),
    );
    const as = async (session: typeof viewer, query: string, variables: Record<string, unknown>) =>
      (await graphql(file.t.baseUrl, query, variables, session.headers('test'))).body;

    expect((await as(viewer, DISPUTES, {})).data.disputes.edges).toHaveLength(2);
    expect(codeOf(await as(viewer, ACCEPT, { id: first.id }))).toBe('FORBIDDEN');
    expect(codeOf(await as(viewer, EVIDENCE, { input: { id: first.id, text: 'winning_evidence' } }))).toBe('FORBIDDEN');
    expect((await orderOf(one, fresh.keys.test.privateKey)).disputes[0].status).toBe('NEEDS_RESPONSE');

    expect((await as(support, EVIDENCE, { input: { id: first.id, text: 'winning_evidence' } })).data.submitDisputeEvidence.status).toBe('UNDER_REVIEW');
    expect((await as(support, ACCEPT, { id: second.id })).data.acceptDispute.status).toBe('ACCEPTED');
    expect((await auditOf(fresh, 'dispute.accepted')).map((a: any) => `${a.actor_type} ${a.actor_label}`)).toEqual([
      `MEMBER support-${fresh.subsidiary.id}@team.test`,
    ]);

    const pub = fresh.keys.test.publicKey;
    expect(codeOf(await gql(DISPUTES, {}, pub))).toBe('FORBIDDEN');
    expect(codeOf(await gql(ACCEPT, { id: second.id }, pub))).toBe('FORBIDDEN');
    expect(codeOf(await gql(EVIDENCE, { input: { id: second.id, text: 'x' } }, pub))).toBe('FORBIDDEN');
  });

  it('answers NOT_AVAILABLE_IN_LIVE_MODE with a live key', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    expect(codeOf(await gql(ACCEPT, { id }, file.m.keys.live.privateKey))).toBe('NOT_AVAILABLE_IN_LIVE_MODE');
    expect(codeOf(await gql(EVIDENCE, { input: { id, text: 'winning_evidence' } }, file.m.keys.live.privateKey))).toBe('NOT_AVAILABLE_IN_LIVE_MODE');
  });

  it('refuses blank or overlong evidence and unknown disputes, and changes nothing', async () => {
    const reference = await paid();
    const dispute = await disputeOf(reference);
    expect(codeOf(await evidence(dispute.id, '   '))).toBe('DISPUTE_EVIDENCE_INVALID');
    expect(codeOf(await evidence(dispute.id, 'x'.repeat(10_001)))).toBe('DISPUTE_EVIDENCE_INVALID');
    expect(codeOf(await evidence('00000000-0000-4000-8000-000000000000', 'winning_evidence'))).toBe('DISPUTE_NOT_FOUND');
    expect(codeOf(await gql(ACCEPT, { id: 'not-an-id' }))).toBe('DISPUTE_NOT_FOUND');
    expect((await orderOf(reference)).disputes[0]).toMatchObject({ status: 'NEEDS_RESPONSE', evidence: null });
    // The longest evidence allowed goes in.
    expect((await evidence(dispute.id, 'y'.repeat(10_000))).data.submitDisputeEvidence.status).toBe('UNDER_REVIEW');
  });

  it('a dispute left unanswered past its deadline is lost (with its webhook), and can no longer be answered', async () => {
    const { receiver: r, merchant: hooked } = await hookedMerchant();
    const key = hooked.keys.test.privateKey;
    const reference = await paid(hooked);
    const dispute = await disputeOf(reference, key);
    await sql(`update dispute set evidence_due_by = now() - interval '1 second' where id = ?`, [dispute.id]);
    expect(codeOf(await gql(EVIDENCE, { input: { id: dispute.id, text: 'winning_evidence' } }, key))).toBe('DISPUTE_NOT_OPEN');
    const lost = await statusBecomes(reference, 'LOST', key);
    expect(lost.evidence).toBeNull();
    const entries = await services().timeline.list(await services().auth.authenticate(key), reference);
    expect(entries.find((e) => e.event === 'dispute.lost')?.metadata).toMatchObject({ disputeId: dispute.id, expired: true });
    const hooks = await r.waitForCount(3);
    expect(hooks.filter((h) => h.json.notify === 'dispute').map((h) => h.json.notifyType)).toEqual(['opened', 'lost']);
    expect(codeOf(await gql(ACCEPT, { id: dispute.id }, key))).toBe('DISPUTE_NOT_OPEN');
  });

  it('a processor notice read again (its acknowledgement lost to a crash) opens nothing twice', async () => {
    const reference = await paid();
    const dispute = await disputeOf(reference);
    await sql(`update sandbox_dispute set acknowledged = null where order_reference = (select processor_reference from checkout_order where reference = ?)`, [
      reference,
    ]);
    await waitFor(
      async () =>
        (
          await sql(
            `select 1 from sandbox_dispute where acknowledged = 'needs_response' and payment_token in (select payment_token from sandbox_dispute where order_reference = (select processor_reference from checkout_order where reference = ?))`,
            [reference],
          )
        ).length > 0,
      10_000,
      'the notice acknowledged again',
    );
    expect((await orderOf(reference)).disputes).toEqual([dispute]);
    expect((await timelineOf(reference)).filter((e) => e === 'dispute.opened')).toHaveLength(1);
  });

  it('a notice of a dispute on an unknown payment, or a decision of an unknown dispute, opens nothing, is acknowledged and is logged at warn', async () => {
    // A processor whose notices name nothing this engine has.
    const { notices, acknowledged, jobs } = ownProcessor();
    const notice = (reference: string, status: DisputeNotice['status']): DisputeNotice => ({
      reference,
      orderReference: `PRC-UNKNOWN-${reference}`,
      amount: '125.50',
      currency: 'NGN',
      reason: 'fraudulent',
      evidenceDueBy: new Date(Date.now() + 86_400_000),
      status,
    });
    notices.push(notice('DSP-UNKNOWN-1', 'needs_response'), notice('DSP-UNKNOWN-2', 'won'));
    const run = await jobs.runOnce();
    expect(run.applied).toBe(0);
    expect(run.unmatched.map((n) => n.reference)).toEqual(['DSP-UNKNOWN-1', 'DSP-UNKNOWN-2']);
    expect(acknowledged).toEqual(['DSP-UNKNOWN-1:needs_response', 'DSP-UNKNOWN-2:won']);
    expect(await sql(`select id from dispute where processor_reference like 'DSP-UNKNOWN-%'`)).toEqual([]);

    // The periodic run says so at warn, with the references and the money (no card data).
    const warnings: Array<Record<string, unknown>> = [];
    const log = { warn: (fields: Record<string, unknown>) => warnings.push(fields), info() {}, error() {} } as unknown as FastifyBaseLogger;
    notices.push(notice('DSP-UNKNOWN-3', 'needs_response'));
    jobs.start(20, log);
    try {
      await waitFor(async () => warnings.length > 0, 5_000, 'the warning of the unmatched notice');
    } finally {
      await jobs.stop();
    }
    expect(warnings).toEqual([
      {
        event: 'dispute.unmatched',
        disputeReference: 'DSP-UNKNOWN-3',
        orderReference: 'PRC-UNKNOWN-DSP-UNKNOWN-3',
        status: 'needs_response',
        amount: '125.50',
        currency: 'NGN',
      },
    ]);
  });

  it("a notice in another currency than the order's opens no dispute: it is acknowledged, refused as currency_mismatch and logged at warn", async () => {
    const reference = await paid(file.m, UNDISPUTED_CARD);
    const { notices, acknowledged, jobs } = ownProcessor();
    const notice = await openingOf(reference, 'DSP-USD', { currency: 'USD', amount: '400.00' });
    notices.push(notice);
    const run = await jobs.applyProcessorNotices();
    expect(run.applied).toBe(0);
    expect(run.unmatched).toEqual([]);
    expect(run.refused).toEqual([{ notice, refusal: 'currency_mismatch' }]);
    expect(acknowledged).toEqual([`${notice.reference}:needs_response`]);
    expect(await sql(`select id from dispute where processor_reference = ?`, [notice.reference])).toEqual([]);
    // No foreign amount left the balance: the whole order is still refundable.
    expect((await orderOf(reference)).disputes).toEqual([]);
    expect((await refund(reference)).data.refundOrder).toMatchObject({ amount: '1000.00', status: 'SUCCEEDED' });

    // The periodic run says so at warn, with the references, the money and why.
    notices.push(await openingOf(reference, 'DSP-GBP', { currency: 'GBP', amount: '5.00' }));
    const [warning] = await warningsOf(jobs, 1);
    expect(warning).toEqual({
      event: 'dispute.refused',
      refusal: 'currency_mismatch',
      disputeReference: expect.stringMatching(/^DSP-GBP-/),
      orderReference: notice.orderReference,
      status: 'needs_response',
      amount: '5.00',
      currency: 'GBP',
    });
  });

  it('a notice of a dispute on a payment not captured (an order Initiated, Failed, or Authorized and not yet captured) opens nothing: refused as payment_not_captured', async () => {
    const orders = {
      Initiated: await orderIn(),
      Failed: await orderIn({ card: '4000000000000002' }),
      Authorized: await orderIn({ card: UNDISPUTED_CARD, captureMethod: 'MANUAL' }),
    };
    const { notices, acknowledged, jobs } = ownProcessor();
    for (const [status, reference] of Object.entries(orders)) {
      expect((await orderOf(reference)).status).toBe(status);
      notices.push(await openingOf(reference, `DSP-${status}`));
    }
    const given = [...notices];
    const run = await jobs.applyProcessorNotices();
    expect(run.applied).toBe(0);
    expect(run.refused).toEqual(given.map((notice) => ({ notice, refusal: 'payment_not_captured' })));
    expect(acknowledged).toEqual(given.map((n) => `${n.reference}:needs_response`));
    for (const reference of Object.values(orders)) expect((await orderOf(reference)).disputes).toEqual([]);
  });

  it('a notice whose amount is not a positive number of cents (0.001, 10.005, 0, -5, not a number) opens nothing: refused as amount_invalid', async () => {
    const reference = await paid(file.m, UNDISPUTED_CARD);
    const { notices, acknowledged, jobs } = ownProcessor();
    for (const amount of ['0.001', '10.005', '0', '-5', 'ten']) notices.push(await openingOf(reference, `DSP-AMOUNT${amount}`, { amount }));
    const given = [...notices];
    const run = await jobs.applyProcessorNotices();
    expect(run.failed).toEqual([]);
    expect(run.refused).toEqual(given.map((notice) => ({ notice, refusal: 'amount_invalid' })));
    expect(acknowledged).toHaveLength(given.length);
    expect((await orderOf(reference)).disputes).toEqual([]);
  });

  it('a notice for more than the order has left (more than it charged, or than its refunds and disputes left) opens nothing: refused as amount_over_balance', async () => {
    const reference = await paid(file.m, UNDISPUTED_CARD);
    const { notices, jobs } = ownProcessor();
    const overCharged = await openingOf(reference, 'DSP-OVER', { amount: '1000.01' });
    notices.push(overCharged);
    expect((await jobs.applyProcessorNotices()).refused).toEqual([{ notice: overCharged, refusal: 'amount_over_balance' }]);

    // 600 refunded: 400 is left, which a dispute may take, and nothing more.
    expect((await refund(reference, '600')).data.refundOrder).toMatchObject({ amount: '600.00', status: 'SUCCEEDED' });
    const overRefunded = await openingOf(reference, 'DSP-OVER-REFUNDED', { amount: '400.01' });
    const rest = await openingOf(reference, 'DSP-REST', { amount: '400.00' });
    notices.push(overRefunded, rest);
    const run = await jobs.applyProcessorNotices();
    expect(run.refused).toEqual([{ notice: overRefunded, refusal: 'amount_over_balance' }]);
    expect(run.applied).toBe(1);
    // The open dispute holds the 400: a second one finds nothing left.
    const second = await openingOf(reference, 'DSP-SECOND', { amount: '0.01' });
    notices.push(second);
    expect((await jobs.applyProcessorNotices()).refused).toEqual([{ notice: second, refusal: 'amount_over_balance' }]);
    expect((await orderOf(reference)).disputes.map((d: any) => `${d.amount} ${d.status}`)).toEqual(['400.00 NEEDS_RESPONSE']);
  });

  it('a refund and a dispute of the same order at the same moment are serialised: one is refused, and refunds with lost disputes never exceed the amount charged', async () => {
    const refunds = services().refunds as unknown as { audit: { recordWith: (...args: unknown[]) => Promise<void> } };
    const audit = refunds.audit;
    /** A transaction held open 300 ms at one point (`hold`), and a promise of its getting there (`inside`). */
    const heldOpen = () => {
      let reached!: () => void;
      const inside = new Promise<void>((resolve) => (reached = resolve));
      let held = false;
      const hold = async () => {
        if (held) return;
        held = true;
        reached();
        await sleep(300);
      };
      return { hold, inside };
    };
    // Each way round, three times: the dispute's transaction held open (its checks made, its row not
    // yet written) while the refund is asked; the refund's held open (its checks made and its row
    // written, not committed) while the notice is applied; and both let go at once.
    const rounds = (['dispute held', 'refund held', 'at once'] as const).flatMap((way) => [way, way, way]);
    for (const way of rounds) {
      const reference = await paid(file.m, UNDISPUTED_CARD);
      const { hold, inside } = heldOpen();
      const { notices, jobs } = ownProcessor(way === 'dispute held' ? hold : undefined);
      const notice = await openingOf(reference, 'DSP-RACE');
      notices.push(notice);
      if (way === 'refund held')
        refunds.audit = Object.create(audit, { recordWith: { value: async (...args: unknown[]) => (await hold(), audit.recordWith(...args)) } });
      let refunded, run;
      try {
        [refunded, run] = await Promise.all([
          way === 'dispute held' ? inside.then(() => refund(reference)) : refund(reference),
          way === 'refund held' ? inside.then(() => jobs.applyProcessorNotices()) : jobs.applyProcessorNotices(),
        ]);
      } finally {
        refunds.audit = audit;
      }
      const refusedRefund = codeOf(refunded);
      const disputed = run.applied === 1;
      if (way === 'dispute held') expect({ way, disputed, refusedRefund }).toEqual({ way, disputed: true, refusedRefund: 'REFUND_NOT_ALLOWED' });
      if (way === 'refund held') expect({ way, disputed, refusedRefund }).toEqual({ way, disputed: false, refusedRefund: undefined });
      // Whichever came first, the other was refused: a refund while the dispute is open, a dispute of money refunded.
      if (disputed) expect(refusedRefund).toBe('REFUND_NOT_ALLOWED');
      else {
        expect(refunded.data.refundOrder).toMatchObject({ amount: '1000.00', status: 'SUCCEEDED' });
        expect(run.refused).toEqual([{ notice, refusal: 'amount_over_balance' }]);
      }
      // The dispute, if opened, is lost: the money it took and the refunds together stay within the charge.
      notices.push({ ...notice, status: 'lost' });
      await jobs.applyProcessorNotices();
      const [books] = await sql(
        `select o.total_charged_amount::text as charged,
           (select coalesce(sum(r.amount), 0) from refund r where r.order_id = o.id and r.status <> 'FAILED')::text as refunded,
           (select coalesce(sum(d.amount), 0) from dispute d where d.order_id = o.id and d.status in ('LOST', 'ACCEPTED'))::text as lost
         from checkout_order o where o.reference = ?`,
        [reference],
      );
      expect({ way, ...books }).toEqual({ way, charged: '1000.0000', refunded: disputed ? '0' : '1000.0000', lost: disputed ? '1000.0000' : '0' });
    }
  });

  it('a notice the database refuses is left unacknowledged and logged; the notices after it are still applied', async () => {
    // A payment the sandbox files no dispute of: the notice below is the only one on it.
    const reference = await paid(file.m, UNDISPUTED_CARD);
    const [order] = await sql(`select processor_reference from checkout_order where reference = ?`, [reference]);
    const notices: DisputeNotice[] = [];
    const acknowledged: string[] = [];
    const processor = {
      disputeNotices: async () => notices.splice(0),
      acknowledgeDisputeNotice: async (ref: string) => void acknowledged.push(ref),
    } as unknown as PaymentProcessor;
    const jobs = jobsWith(processor);
    const base = { currency: 'NGN', evidenceDueBy: new Date(Date.now() + 86_400_000), status: 'needs_response' as const };
    // A reason longer than the 100 characters the dispute's column holds.
    notices.push({ ...base, reference: 'DSP-REFUSED', orderReference: order!.processor_reference, amount: '10.00', reason: 'r'.repeat(101) });
    notices.push({ ...base, reference: 'DSP-AFTER', orderReference: 'PRC-UNKNOWN-AFTER', amount: '10.00', reason: 'fraudulent' });
    const run = await jobs.runOnce();
    expect(run.failed.map((f) => f.notice.reference)).toEqual(['DSP-REFUSED']);
    expect(run.unmatched.map((n) => n.reference)).toEqual(['DSP-AFTER']);
    expect(acknowledged).toEqual(['DSP-AFTER']);
    expect(await sql(`select id from dispute where processor_reference = 'DSP-REFUSED'`)).toEqual([]);
  });

  it("the processor's decision on a dispute not yet answered is applied: won gives the balance back, and no evidence is taken after it", async () => {
    const reference = await paid();
    const dispute = await disputeOf(reference);
    const [row] = await sql(`select processor_reference, amount::text as amount from dispute where id = ?`, [dispute.id]);
    const notices: DisputeNotice[] = [
      {
        reference: row!.processor_reference,
        orderReference: 'unused',
        amount: row!.amount,
        currency: 'NGN',
        reason: 'fraudulent',
        evidenceDueBy: new Date(dispute.evidenceDueBy),
        status: 'won',
      },
    ];
    const processor = { disputeNotices: async () => notices.splice(0), acknowledgeDisputeNotice: async () => undefined } as unknown as PaymentProcessor;
    const run = await jobsWith(processor).runOnce();
    expect(run.applied).toBe(1);
    const order = await orderOf(reference);
    expect(order.disputes[0].status).toBe('WON');
    expect(order.amountRefunded).toBe('0.00');
    expect(codeOf(await evidence(dispute.id, 'too late'))).toBe('DISPUTE_NOT_OPEN');
  });

  it('an answer the processor did not take (a failed call) is sent again by the dispute job, and the dispute is then decided', async () => {
    const reference = await paid();
    const dispute = await disputeOf(reference);
    const processor = (services().disputes as unknown as { processors: { test: SandboxProcessor } }).processors.test;
    const original = processor.answerDispute;
    processor.answerDispute = async () => {
      throw new Error('acquirer unreachable');
    };
    let answered;
    try {
      answered = await evidence(dispute.id, 'Proof of delivery: winning_evidence');
    } finally {
      processor.answerDispute = original;
    }
    expect(answered.data.submitDisputeEvidence.status).toBe('UNDER_REVIEW');
    expect(await sql(`select answer_sent_at from dispute where id = ?`, [dispute.id])).toEqual([{ answer_sent_at: null }]);
    // Younger answers are left to their request; this one is old enough to send again.
    await sql(`update dispute set answered_at = now() - interval '10 seconds' where id = ?`, [dispute.id]);
    await statusBecomes(reference, 'WON');
    expect(await sql(`select evidence from sandbox_dispute where answer_key = ?`, [dispute.id])).toEqual([{ evidence: 'Proof of delivery: winning_evidence' }]);
  });

  it("the dashboard summary shows the period's disputed volume per currency, and how much of it was lost", async () => {
    const fresh = await createTestMerchant(file.t);
    const key = fresh.keys.test.privateKey;
    const from = new Date(Date.now() - 60_000).toISOString();
    const [one, two] = [await paid(fresh), await paid(fresh)];
    await disputeOf(one, key);
    const second = await disputeOf(two, key);
    await gql(ACCEPT, { id: second.id }, key);
    const to = new Date(Date.now() + 60_000).toISOString();
    const summary = await gql(
      `query ($from: DateTimeISO!, $to: DateTimeISO!) { dashboardSummary(from: $from, to: $to) { disputed { currency count amount lost } } }`,
      { from, to },
      key,
    );
    expect(summary.data.dashboardSummary.disputed).toEqual([{ currency: 'NGN', count: 2, amount: '2000.00', lost: '1000.00' }]);
  });
});
