import 'reflect-metadata';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Config } from './config';
import { openDatabase, type Database } from './database';
import { loadMasterKey, verifyMasterKey } from './crypto/master-key';
import { SecretBox } from './crypto/secret-box';
import { createServices, type AppContext } from './app-context';
import { systemClock, type Clock } from './shared/clock';
import { buildApp } from './app';
import { PaymentScheduler } from './payments/payment-scheduler';

export interface Runtime {
  ctx: AppContext;
  db: Database;
  /** Set when MASTER_KEY was not given: the generated key file in DATA_DIR. */
  generatedMasterKeyFile?: string;
  close(): Promise<void>;
}

/** Opens the database (migrating when configured) and wires the domain services. */
export async function openRuntime(config: Config, options: { clock?: Clock; migrate?: boolean } = {}): Promise<Runtime> {
  const masterKey = loadMasterKey(config.masterKey, config.dataDir);
  const db = await openDatabase(config, { migrate: options.migrate });
  const clock = options.clock ?? systemClock;
  const ctx: AppContext = { config, orm: db.orm, clock, services: createServices(config, db.orm, masterKey.key, clock, db.mode, db.reads) };
  const close = async () => {
    try {
      await ctx.services.payloads.close(); // the decryption worker threads
      // Background work queues its emails while the database is still open (a command-line run also sends its own).
      await ctx.services.teamMail.settled();
      // Replaced keys announced to the running instances before the connection that carries them stops.
      await ctx.services.keyAnnouncements.settled();
      // A connection the fan-out opened only to publish (the command line's, with REDIS_URL); stopped already by a service.
      await ctx.services.eventFanout.stop();
    } finally {
      ctx.services.teamMail.close();
      await db.close();
    }
  };
  try {
    // A wrong MASTER_KEY refuses to start (MasterKeyMismatchError) instead of running and failing on every secret.
    const connection = db.orm.em.getConnection();
    await verifyMasterKey(connection, new SecretBox(masterKey.key), async () => {
      const [first] = await connection.execute('select min(id) as id from subsidiary');
      if (first?.id == null) return 'none';
      return ctx.services.signingSecrets.current(Number(first.id), 'live').then(
        () => 'opened' as const,
        () => 'failed' as const,
      );
    });
  } catch (err) {
    await close();
    throw err;
  }
  return { ctx, db, generatedMasterKeyFile: masterKey.generatedFile, close };
}

export interface Service {
  runtime: Runtime;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** The whole service: runtime plus HTTP server (not yet listening). */
export async function createService(config: Config, options: { clock?: Clock; logger?: FastifyServerOptions['logger'] } = {}): Promise<Service> {
  const runtime = await openRuntime(config, options);
  try {
    const app = await buildApp(runtime.ctx, { logger: options.logger });
    const { payments, recurring, refunds, disputes, disputeJobs, eventFanout, webhooks, teamMail } = runtime.ctx.services;
    recurring.onFault = (err, id) => app.log.error({ err, recurringPaymentId: id }, 'recurring charge failed; retried later');
    recurring.books.onBeyondTerms = (id, orderReference) =>
      app.log.error({ recurringPaymentId: id, orderReference }, 'renewal approved beyond the number of payments; not counted, to be refunded');
    refunds.onFault = (err, id) =>
      app.log.error({ err, refundId: id }, 'refund not settled: the processor call or its reconciliation failed; left pending for reconciliation');
    runtime.ctx.services.linkCheckout.onFault = (err, orderReference) =>
      app.log.error({ err, orderReference }, 'link pay failed after its order was made; the customer was sent to its result page');
    payments.hearFaults((err, subject) =>
      app.log.error({ err, ...subject }, 'payment job failed for one item; the others went on, it is tried again at the next run'),
    );
    disputes.onFault = (err, id) => app.log.error({ err, disputeId: id }, 'dispute answer to the processor failed; sent again by the dispute job');
    const scheduler = new PaymentScheduler(payments, recurring, app.log, [
      // Refunds a crash (or a silent processor) left PENDING, settled from the processor's record.
      () => refunds.reconcilePendingRefunds(),
      () => runtime.ctx.services.idempotency.purgeExpired(),
      // Team emails sent or given up longer ago than EMAIL_OUTBOX_RETENTION_DAYS.
      () => teamMail.purgeSettled(),
      () => runtime.ctx.services.orders.lists.rollUp(),
    ]);
    await scheduler.reconcileOnStart();
    scheduler.start(config.schedulerIntervalMs);
    disputeJobs.start(config.disputePollIntervalMs, app.log);
    // Listening before the server answers: a subscriber never misses a change committed after it subscribed.
    await eventFanout.start(app.log);
    webhooks.start(app.log);
    // The email sender: queued team emails, sent, retried, given up (with SMTP_URL).
    teamMail.start((err) => app.log.error({ err }, 'sending queued emails failed; retried on the next pass'));
    let closing: Promise<void> | undefined;
    return {
      runtime,
      app,
      close: () =>
        (closing ??= (async () => {
          // Stop accepting connections at once and finish the requests in flight, while the
          // background jobs wind down (each bounded: a webhook attempt by its timeout).
          await Promise.all([app.close(), scheduler.stop(), disputeJobs.stop(), webhooks.stop(), teamMail.stop()]);
          await eventFanout.stop();
          await runtime.close();
        })()),
    };
  } catch (err) {
    await runtime.close();
    throw err;
  }
}
