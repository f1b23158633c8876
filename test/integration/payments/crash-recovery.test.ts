import 'reflect-metadata';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { graphql, postEncrypted, request } from '../../support/http';
import { TEST_MASTER_KEY } from '../../support/database';
import { createScratchDatabase, freePort } from '../../support/scratch-database';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { SandboxProcessor } from '../../../src/payments/sandbox/sandbox.processor';
import { processMarker } from '../../support/test-processes';
import { delayedCall, landsJustBeforeClose } from '../../support/processor-faults';
import { encryptPayload } from '../../support/payload-client';

const ROOT = path.resolve(__dirname, '../../..');
const RUNNER = path.join(__dirname, 'support', 'run-service.js');
const billing = { street: '1 Marina', city: 'Lagos', country: 'NG' };

/**
 * Issue 10 point 4: the real service, in a child process, killed right after the processor
 * has answered and before the answer is written; a new instance settles the attempt from the
 * processor's record, exactly once. A database of this file's own: the restarted instance
 * reconciles every interrupted attempt it finds, and must find only this file's.
 */
describe('crash between the processor call and the settlement', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let t: TestService;
  let m: CreatedMerchant;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase('payments_crash');
    t = await startTestService({ DATABASE_URL: scratch.url });
    m = await createTestMerchant(t);
  }, 60_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await t?.close();
    await scratch?.drop();
  }, 30_000);

  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  const k = () => m.keys.test;

  async function spawnService(env: Record<string, string> = {}): Promise<{ baseUrl: string; child: ChildProcess; exited: Promise<void> }> {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [RUNNER], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        ...processMarker(),
        NODE_ENV: 'test',
        DATABASE_URL: scratch.url,
        MIGRATE_ON_START: 'false',
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: baseUrl,
        MASTER_KEY: TEST_MASTER_KEY,
        LOG_LEVEL: 'silent',
        DATABASE_POOL_SIZE: '2',
        SCHEDULER_INTERVAL_MS: '0',
        WEBHOOK_CONCURRENCY: '0',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const end = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`service exited (${child.exitCode}): ${stderr}`);
      if (
        await fetch(`${baseUrl}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (Date.now() > end) throw new Error(`service did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { baseUrl, child, exited };
  }

  async function createOrder(body: Record<string, unknown> = {}): Promise<string> {
    const reference = `CRASH-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const res = await postEncrypted(t.baseUrl, '/checkout/order/create', k().publicKey, k().encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1000, reference, description: 'Crash', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return', ...body },
    });
    expect(res.body.statusCode).toBe('01');
    return reference;
  }

  /** Pays through a service started with the crash hook; returns once that process is dead. */
  async function payAndCrash(reference: string, cardNumber: string): Promise<void> {
    const crashing = await spawnService({ PGW_TEST_CRASH_AFTER_PROCESSOR_CALL: '1' });
    const answer = await postEncrypted(crashing.baseUrl, '/checkout/order/pay', k().publicKey, k().encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
    }).then(
      () => 'answered',
      () => 'connection lost',
    );
    await crashing.exited;
    expect(answer).toBe('connection lost');
    expect(crashing.child.signalCode).toBe('SIGKILL');
  }

  const attemptOf = async (reference: string) =>
    (await sql(
      `select p.reference, p.status_id as payment_status, o.status_id as order_status from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ?`,
      [reference],
    )) as Array<{
      reference: string;
      payment_status: number;
      order_status: number;
    }>;
  const sandboxRows = async () => (await sql(`select count(*)::int as n from sandbox_authorization`))[0].n as number;
  /** Reconciliation leaves attempts younger than a few seconds to the request handling them: let this one age. */
  const age = (paymentReference: string, seconds: number) =>
    sql(`update order_payment set processing_started_at = now() - make_interval(secs => ?) where reference = ?`, [seconds, paymentReference]);
  const sandbox = () => (t.service.runtime.ctx.services.payments as unknown as { processors: { test: SandboxProcessor } }).processors.test;

  it('a payment whose process died after the processor approved it is settled once on restart, from the processor record', async () => {
    const link = (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: k().privateKey,
        body: { Name: 'No 3DS', Description: 'd', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH', Amount: '1000' },
      })
    ).body.data.paymentLink;
    const reference = await createOrder({ paymentLinkId: link.id });
    await payAndCrash(reference, '5123450000000008');

    // Money moved at the processor; the order was left Processing.
    const [attempt] = await attemptOf(reference);
    expect(attempt).toMatchObject({ payment_status: 3, order_status: 3 });
    const [authorization] = await sql(`select token, state from sandbox_authorization where idempotency_key = ?`, [attempt!.reference]);
    expect(authorization).toMatchObject({ state: 'approved' });
    const authorizationsBefore = await sandboxRows();
    await age(attempt!.reference, 10);

    const restarted = await spawnService();
    const details = (await request(restarted.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body.data;
    expect(details).toMatchObject({ statusId: 5, status: 'Successful', paymentResponseCode: '00' });
    expect(details.orderPayments).toEqual([expect.objectContaining({ orderPaymentReference: attempt!.reference, statusId: 5 })]);
    expect(details.cardDetails).toEqual([expect.objectContaining({ status: true, cardToken: authorization.token, cardLastFourDigits: '0008' })]);

    // No second authorization; one settlement event; reconciling again changes nothing.
    expect(await sandboxRows()).toBe(authorizationsBefore);
    const events = await sql(`select e.notify_type from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? order by e.sequence`, [
      reference,
    ]);
    expect(events).toEqual([{ notify_type: 'successful' }]);
    expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(0);
    const tenant = await t.service.runtime.ctx.services.auth.authenticate(k().publicKey);
    const timeline = (await t.service.runtime.ctx.services.timeline.list(tenant, reference)).map((e) => e.event);
    expect(timeline).toEqual(['order.created', 'payment.initiated', 'payment.reconciled', 'order.settled']);
    restarted.child.kill('SIGTERM');
    await restarted.exited;
  }, 90_000);

  it('a 3-D Secure challenge issued before the crash is restored on restart and can be answered', async () => {
    const reference = await createOrder();
    await payAndCrash(reference, '4111111111111111');
    const [attempt] = await attemptOf(reference);
    expect(attempt).toMatchObject({ payment_status: 3, order_status: 3 });
    await age(attempt!.reference, 10);

    const restarted = await spawnService();
    expect(await attemptOf(reference)).toEqual([expect.objectContaining({ payment_status: 2, order_status: 2 })]);
    const answer = await fetch(`${restarted.baseUrl}/sandbox/3ds/${attempt!.reference}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'otp=123456',
    });
    expect(answer.headers.get('location')).toContain('status=successful');
    expect((await sql(`select count(*)::int as n from sandbox_authorization where idempotency_key = ?`, [attempt!.reference]))[0].n).toBe(1);
    restarted.child.kill('SIGTERM');
    await restarted.exited;
  }, 90_000);

  describe('a processor that does not answer (reconciled by the scheduler)', () => {
    const payInProcess = (reference: string) =>
      postEncrypted(t.baseUrl, '/checkout/order/pay', k().publicKey, k().encryptionKey, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
      });

    it('an answer lost on the way back is settled from the processor record, once', async () => {
      const reference = await createOrder();
      const processor = sandbox();
      const original = processor.authorizeCard;
      processor.authorizeCard = async (r) => {
        await original.call(processor, r);
        throw new Error('connection reset by the acquirer');
      };
      let res;
      try {
        res = await payInProcess(reference);
      } finally {
        processor.authorizeCard = original;
      }
      expect(res.status).toBe(500);
      const [attempt] = await attemptOf(reference);
      expect(attempt).toMatchObject({ payment_status: 3, order_status: 3 });
      // Too young: its own request might still be settling it.
      expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(0);
      await age(attempt!.reference, 10);
      expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(1);
      expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(0);
      expect(await attemptOf(reference)).toEqual([expect.objectContaining({ payment_status: 2, order_status: 2 })]);
      expect((await sql(`select count(*)::int as n from sandbox_authorization where idempotency_key = ?`, [attempt!.reference]))[0].n).toBe(1);
    });

    it('a call that never reached the processor fails after the processor deadline, moving no money', async () => {
      const reference = await createOrder();
      const processor = sandbox();
      const original = processor.authorizeCard;
      processor.authorizeCard = async () => {
        throw new Error('acquirer unreachable');
      };
      try {
        expect((await payInProcess(reference)).status).toBe(500);
      } finally {
        processor.authorizeCard = original;
      }
      const [attempt] = await attemptOf(reference);
      await age(attempt!.reference, 60);
      expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(0); // the processor may still answer
      expect(await attemptOf(reference)).toEqual([expect.objectContaining({ payment_status: 3 })]);
      await age(attempt!.reference, 180);
      expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(1);
      const details = (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body.data;
      expect(details).toMatchObject({ statusId: 4, paymentResponseCode: 'Z5', paymentResponseMessage: 'Payment not processed' });
      expect(await sql(`select kind, state from sandbox_authorization where idempotency_key = ?`, [attempt!.reference])).toEqual([
        { kind: 'closed', state: 'declined' },
      ]);
    });

    it('an attempt whose processor lookup fails does not hold up the reconciliation of the others', async () => {
      const processor = sandbox();
      const [originalAuthorize, originalLookup] = [processor.authorizeCard, processor.lookup];
      const [stuck, next] = [await createOrder(), await createOrder()];
      processor.authorizeCard = async () => {
        throw new Error('acquirer unreachable');
      };
      try {
        for (const reference of [stuck, next]) expect((await payInProcess(reference)).status).toBe(500);
      } finally {
        processor.authorizeCard = originalAuthorize;
      }
      const [[stuckAttempt], [nextAttempt]] = [await attemptOf(stuck), await attemptOf(next)];
      await age(stuckAttempt!.reference, 181); // the older: reconciled first
      await age(nextAttempt!.reference, 180);
      processor.lookup = async (key) => {
        if (key === stuckAttempt!.reference) throw new Error('the processor timed out on this one');
        return originalLookup.call(processor, key);
      };
      const faults: unknown[] = [];
      const jobs = t.service.runtime.ctx.services.payments;
      jobs.hearFaults((err, subject) => faults.push(subject));
      try {
        expect(await jobs.reconcileInterruptedAttempts()).toBe(1);
      } finally {
        processor.lookup = originalLookup;
        jobs.hearFaults(() => undefined);
      }
      expect(faults).toEqual([{ paymentId: expect.any(Number) }]);
      expect([(await attemptOf(stuck))[0]!.payment_status, (await attemptOf(next))[0]!.payment_status]).toEqual([3, 4]);
      expect(await jobs.reconcileInterruptedAttempts()).toBe(1); // the processor answers again
    });

    const expireNow = (paymentReference: string) =>
      sql(`update order_payment set authentication_expires_at = now() - interval '1 second' where reference = ?`, [paymentReference]);

    it.each([
      ['by the clock', 'sweep'],
      ['when the page is answered again past the deadline', 'page'],
    ] as const)(
      'a cardholder answer that reached the processor after its response was lost settles the attempt at its expiry %s, not Z2',
      async (_when, by) => {
        const reference = await createOrder();
        const otpPage: string = (await payInProcess(reference)).body.data.paymentDetail.redirectUrl;
        const [attempt] = await attemptOf(reference);
        const processor = sandbox();
        const original = processor.completeChallenge;
        let lost: Parameters<typeof original> | undefined;
        processor.completeChallenge = async (...args) => {
          lost = args; // the page's call is sent; it reaches the processor only later
          throw new Error('connection reset by the acquirer');
        };
        const answer = () =>
          fetch(otpPage, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'otp=123456' });
        try {
          expect((await answer()).status).toBe(500);
        } finally {
          processor.completeChallenge = original;
        }
        // Past the deadline the processor still shows the challenge: the attempt waits for the cardholder again.
        await age(attempt!.reference, 180);
        expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(1);
        expect(await attemptOf(reference)).toEqual([expect.objectContaining({ payment_status: 2 })]);
        await original.apply(processor, lost!); // the answer lands: approved at the processor
        await expireNow(attempt!.reference);
        if (by === 'sweep') expect(await t.service.runtime.ctx.services.payments.expireStaleAuthentications()).toBe(1);
        else await answer(); // the cardholder answers again before the clock's sweep
        const details = (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body.data;
        expect(details).toMatchObject({ statusId: 5, paymentResponseCode: '00' });
      },
    );

    it('an authentication that expires closes its challenge at the processor: a late answer of the cardholder is declined there', async () => {
      const reference = await createOrder();
      await payInProcess(reference);
      const [attempt] = await attemptOf(reference);
      const [{ token }] = await sql(`select token from sandbox_authorization where idempotency_key = ?`, [attempt!.reference]);
      await expireNow(attempt!.reference);
      expect(await t.service.runtime.ctx.services.payments.expireStaleAuthentications()).toBe(1);
      const details = (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body.data;
      expect(details).toMatchObject({ statusId: 4, paymentResponseCode: 'Z2' });
      expect(await sandbox().completeChallenge(attempt!.reference, token, '123456')).toMatchObject({ kind: 'declined', code: 'Z2' });
      expect(await sql(`select state from sandbox_authorization where idempotency_key = ?`, [attempt!.reference])).toEqual([{ state: 'declined' }]);
    });

    it('a call still on its way when the deadline fails the attempt is refused by the processor: its key was closed first, no money moves', async () => {
      const reference = await createOrder();
      const slow = delayedCall(sandbox(), 'authorizeCard');
      let paying: ReturnType<typeof payInProcess> | undefined;
      try {
        paying = payInProcess(reference);
        let attempt: { reference: string } | undefined;
        for (let i = 0; i < 500 && !attempt; i++) {
          [attempt] = await attemptOf(reference);
          if (!attempt) await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await age(attempt!.reference, 180);
        expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(1);
        slow.arrive();
        await paying;
        // The late call got the closed key's refusal: nothing was authorized, the order stays Failed (Z5).
        expect(await sql(`select kind, state from sandbox_authorization where idempotency_key = ?`, [attempt!.reference])).toEqual([
          { kind: 'closed', state: 'declined' },
        ]);
        const details = (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body.data;
        expect(details).toMatchObject({ statusId: 4, paymentResponseCode: 'Z5' });
      } finally {
        slow.restore();
        await paying?.catch(() => undefined);
      }
    });

    it.each([
      ['a 3-D Secure call', false, 'restores its challenge, not Z5', { payment_status: 2, order_status: 2 }, { kind: 'card', state: 'pending' }],
      ['a NOAUTH call', true, 'is settled from its record, not failed', { payment_status: 5, order_status: 5 }, { kind: 'card', state: 'approved' }],
    ])('%s that reaches the processor just before its key would be closed %s', async (_what, noAuth, _outcome, settled, record) => {
      const link = noAuth
        ? (
            await request(t.baseUrl, 'POST', '/checkout/links/create', {
              apiKey: k().privateKey,
              body: { Name: 'No 3DS', Description: 'd', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH', Amount: '1000' },
            })
          ).body.data.paymentLink
        : null;
      const reference = await createOrder(link ? { paymentLinkId: link.id } : {});
      const late = landsJustBeforeClose(sandbox(), 'authorizeCard');
      try {
        expect((await payInProcess(reference)).status).toBe(500);
        const [attempt] = await attemptOf(reference);
        await age(attempt!.reference, 180);
        expect(await t.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(1);
        expect(await attemptOf(reference)).toEqual([expect.objectContaining(settled)]);
        expect(await sql(`select kind, state from sandbox_authorization where idempotency_key = ?`, [attempt!.reference])).toEqual([record]);
      } finally {
        late.restore();
      }
    });
  });

  describe('a processor that answers too late (PROCESSOR_TIMEOUT_MS)', () => {
    let impatient: TestService;
    beforeAll(async () => {
      impatient = await startTestService({ DATABASE_URL: scratch.url, MIGRATE_ON_START: 'false', PROCESSOR_TIMEOUT_MS: '1000' });
    }, 60_000);
    afterAll(() => impatient?.close());

    /** The acquirer stalls while `work` runs: its own table is locked, so the sandbox's writes wait. Then it is back. */
    async function whileProcessorStalls<T>(work: () => Promise<T>): Promise<T> {
      const stall = await t.service.runtime.ctx.orm.em.getConnection().getKnex().transaction();
      try {
        await stall.raw('lock table sandbox_authorization in exclusive mode');
        return await work();
      } finally {
        await stall.commit();
      }
    }
    const noAuthLink = async () =>
      (
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: k().privateKey,
          body: { Name: 'Tent', Description: 'd', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH', Amount: '1000' },
        })
      ).body.data.paymentLink as { reference: string };
    /** A customer pays on the link's hosted page, through the service with the short time limit. */
    const payOnLinkPage = (link: { reference: string }) =>
      request(impatient.baseUrl, 'POST', `/pay/${link.reference}`, {
        body: {
          paymentOption: 'C',
          customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
          data: encryptPayload(
            { card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing } },
            k().encryptionKey,
          ),
        },
      });
    /** The call the service stopped waiting for lands once the acquirer is back: its record appears. */
    async function recordLands(key: string): Promise<unknown[]> {
      let landed: unknown[] = [];
      for (let i = 0; i < 500 && landed.length === 0; i++) {
        landed = await sql(`select state from sandbox_authorization where idempotency_key = ?`, [key]);
        if (landed.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return landed;
    }

    it('a pay whose processor call outlives the limit answers 504; the call that lands later is settled from its record', async () => {
      const reference = await createOrder();
      const started = Date.now();
      const res = await whileProcessorStalls(() =>
        postEncrypted(impatient.baseUrl, '/checkout/order/pay', k().publicKey, k().encryptionKey, {
          reference,
          paymentOption: 'C',
          country: 'NG',
          card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
        }),
      );
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(res.status).toBe(504);
      expect(res.body).toEqual({
        status: 'failed',
        statusCode: '504',
        message: "The payment processor did not answer in time. The outcome will be confirmed shortly: read the order's status before trying again.",
      });
      const [attempt] = await attemptOf(reference);
      expect(attempt).toMatchObject({ payment_status: 3, order_status: 3 });
      // The call was not cancelled: once the acquirer is back it lands, and reconciliation settles the attempt from it.
      expect(await recordLands(attempt!.reference)).toEqual([{ state: 'pending' }]); // a 3-D Secure challenge
      await age(attempt!.reference, 10);
      expect(await impatient.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(1);
      expect(await attemptOf(reference)).toEqual([expect.objectContaining({ payment_status: 2, order_status: 2 })]);
      // The merchant who got no answer reads the order and sends the customer to the challenge the late call opened.
      const orderPayments = async () =>
        (
          await graphql(
            t.baseUrl,
            `
              query ($reference: String!) {
                order(reference: $reference) {
                  statusId
                  orderPayments {
                    statusId
                    authenticationUrl
                  }
                }
              }
            `,
            { reference },
            { 'api-key': k().privateKey },
          )
        ).body.data.order.orderPayments as Array<{ statusId: number; authenticationUrl: string | null }>;
      const [pending] = await orderPayments();
      expect(pending).toEqual({ statusId: 2, authenticationUrl: `${t.baseUrl}/sandbox/3ds/${attempt!.reference}` });
      const answered = await fetch(pending!.authenticationUrl!, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'otp=123456',
      });
      expect(answered.headers.get('location')).toContain('status=successful');
      expect(await orderPayments()).toEqual([{ statusId: 5, authenticationUrl: null }]);
    }, 60_000);

    it('a link payment that fails before its attempt is recorded answers the error on the form: nothing can be with the processor', async () => {
      const link = await noAuthLink();
      const payments = impatient.service.runtime.ctx.services.payments;
      const pay = payments.pay;
      payments.pay = async () => {
        throw new Error('pool exhausted before the attempt was written');
      };
      try {
        const res = await payOnLinkPage(link);
        expect(res.status).toBe(500);
        expect(res.body.redirectUrl).toBeUndefined();
      } finally {
        payments.pay = pay;
      }
    });

    it("a customer whose link payment outlives the limit is sent to that order's result page, never back to the form to pay a second order", async () => {
      const link = await noAuthLink();
      const res = await whileProcessorStalls(() => payOnLinkPage(link));
      expect(res.status).toBe(200);
      const next = new URL(res.body.redirectUrl);
      expect(next.pathname).toBe(`/pay/${link.reference}/result`);
      const reference = next.searchParams.get('reference')!;
      const page = async () => (await fetch(`${impatient.baseUrl}${next.pathname}${next.search}`)).text();
      expect(await page()).toContain('data-outcome="in_progress"');
      const [attempt] = await attemptOf(reference);
      expect(await recordLands(attempt!.reference)).toEqual([{ state: 'approved' }]);
      await age(attempt!.reference, 10);
      expect(await impatient.service.runtime.ctx.services.payments.reconcileInterruptedAttempts()).toBe(1);
      expect(await page()).toContain('data-outcome="successful"');
      const orders = await sql(`select o.reference from checkout_order o join payment_link l on l.id = o.payment_link_id where l.reference = ?`, [
        link.reference,
      ]);
      expect(orders).toEqual([{ reference }]);
    }, 60_000);
  });
});
