import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { createScratchDatabase } from '../../support/scratch-database';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { Tenant } from '../../../src/merchants/tenant';
import { ManualClock } from '../../../src/shared/clock';
import { OrderStatus } from '../../../src/orders/order-status';
import { OutboxService } from '../../../src/events/outbox.service';
import { SandboxProcessor } from '../../../src/payments/sandbox/sandbox.processor';
import { PaymentService } from '../../../src/payments/payment.service';
import { RecurringBillingService } from '../../../src/payments/recurring-billing.service';
import type { FinalProcessorResult } from '../../../src/payments/processor';

const HOUR = 3600_000;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };

/** The sandbox, noting the idempotency key of every saved-card charge it is asked for. */
class NotingProcessor extends SandboxProcessor {
  readonly charges: string[] = [];
  override async chargeToken(request: Parameters<SandboxProcessor['chargeToken']>[0]): Promise<FinalProcessorResult> {
    this.charges.push(request.idempotencyKey);
    return super.chargeToken(request);
  }
}

describe('renewals are charged through the processor of the subscription environment', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let clock: ManualClock;
  let scratch: { url: string; drop(): Promise<void> };
  let live: Tenant;
  let processors: { test: NotingProcessor; live: NotingProcessor };
  let engine: { payments: PaymentService; recurring: RecurringBillingService };

  beforeAll(async () => {
    // A database of this file's own: the billing sweeps find only this file's subscriptions.
    clock = new ManualClock(new Date());
    scratch = await createScratchDatabase('renewal_processor');
    t = await startTestService({ DATABASE_URL: scratch.url }, { clock });
    m = await createTestMerchant(t);
    const { orm, services } = t.service.runtime.ctx;
    const [env] = await orm.em.getConnection().execute(`select id from app_environment where subsidiary_id = ? and mode = 'live'`, [m.subsidiary.id]);
    live = { environmentId: Number(env.id), subsidiaryId: m.subsidiary.id, mode: 'live', keyKind: 'private' };
    // The same engine as the service's, but with a live processor configured (the service has none).
    processors = { test: new NotingProcessor(orm), live: new NotingProcessor(orm) };
    const recurring = new RecurringBillingService(orm, processors, services.timeline, clock, services.audit);
    const payments = new PaymentService(
      orm,
      processors,
      services.orders,
      services.timeline,
      new OutboxService(t.config.publicUrl, clock),
      services.eventFanout,
      clock,
      services.fees,
      services.links,
      { publicUrl: t.config.publicUrl, authenticationTimeoutMs: t.config.authenticationTimeoutMs },
      recurring,
    );
    engine = { payments, recurring };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  });
  afterEach(() => clock.set(new Date()));

  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);

  /** A live subscription (hourly, three payments), its first payment approved by the live processor. */
  async function liveSubscription(reference: string): Promise<{ id: number }> {
    const link = (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.live.privateKey,
        body: { Name: 'Gym', Description: 'Hourly plan', PaymentType: 'SUB', AuthOption: 'NOAUTH', Amount: '500', FrequencyId: '1', NumberOfPayments: '3' },
      })
    ).body.data.paymentLink;
    const created = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.live.publicKey, m.keys.live.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 500, reference, description: 'Gym', currency: 'NGN' },
      payment: { RedirectUrl: 'https://m.test/back', paymentLinkId: link.id },
    });
    expect(created.body.statusCode).toBe('01');
    const paid = await engine.payments.pay(live, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
    });
    expect(paid.aggregate.order.statusId).toBe(OrderStatus.Successful);
    const [recurring] = await sql(`select r.id from recurring_payment r join checkout_order o on o.id = r.order_id where o.reference = ?`, [reference]);
    return { id: Number(recurring.id) };
  }

  const renewalsOf = (recurringId: number) =>
    sql(
      `select o.status_id, o.payment_response_code, p.reference as payment_reference
         from checkout_order o join order_payment p on p.order_id = o.id
        where o.recurring_payment_id = ? and o.id <> (select order_id from recurring_payment where id = ?) order by o.id`,
      [recurringId, recurringId],
    );

  it('a live subscription renews through the live processor, never the sandbox of test keys', async () => {
    const subscription = await liveSubscription(`LIVE-SUB-${Date.now()}`);
    clock.set(new Date(Date.now() + HOUR + 60_000));
    expect(await engine.recurring.chargeDue()).toBe(1);

    const renewals = await renewalsOf(subscription.id);
    expect(renewals).toHaveLength(1);
    expect(renewals[0]).toMatchObject({ status_id: OrderStatus.Successful, payment_response_code: '00' });
    expect(processors.live.charges).toEqual([renewals[0].payment_reference]);
    expect(processors.test.charges).toEqual([]);
    const [books] = await sql(`select state, payments_made from recurring_payment where id = ?`, [subscription.id]);
    expect(books).toMatchObject({ state: 'active', payments_made: 2 });
  });

  it('with no live processor configured, a live renewal is refused as a live payment is: nothing charged, retried later', async () => {
    const subscription = await liveSubscription(`LIVE-SUB-${Date.now()}`);
    const now = new Date(Date.now() + HOUR + 60_000);
    clock.set(now);
    // The service's own billing: test keys have the sandbox, live keys no processor.
    await t.service.runtime.ctx.services.recurring.chargeDue();

    expect(await renewalsOf(subscription.id)).toEqual([]);
    const [books] = await sql(`select state, payments_made, consecutive_failures, next_charge_at from recurring_payment where id = ?`, [subscription.id]);
    expect(books).toMatchObject({ state: 'active', payments_made: 1, consecutive_failures: 1 });
    expect(new Date(books.next_charge_at).getTime()).toBe(now.getTime() + HOUR);
  });
});
