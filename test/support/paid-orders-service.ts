import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import { EVENTS_ENV, createScratchDatabase, payOrder, startReceiver, type Receiver } from '../integration/events/helpers';
import { graphql } from './http';
import { createTestMerchant } from './merchants';
import { startTestService, type TestService } from './service';

let counter = 0;

/**
 * What the test files about paid orders (refunds, disputes) share: the real service on a
 * database of the file's own (its webhook dispatcher and background jobs act on every row they
 * find) with the events tests' webhook settings plus `env`, a merchant, the file's webhook
 * receivers (all closed after the file), and the calls such tests make. Call it in the
 * `describe` body: it registers the file's beforeAll and afterAll.
 */
export function usePaidOrdersService(options: {
  /** The scratch database's suffix (one per file). */
  database: string;
  env?: Record<string, string>;
  /** The prefix of the references `paid()` gives its orders. */
  referencePrefix: string;
  /** The card `paid()` pays with unless told another. */
  card: string;
}) {
  let t: TestService | undefined;
  let m: CreatedMerchant | undefined;
  let drop: () => Promise<void> = async () => undefined;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    const scratch = await createScratchDatabase(options.database);
    drop = scratch.drop;
    t = await startTestService({ ...EVENTS_ENV, DATABASE_URL: scratch.url, ...options.env });
    m = await createTestMerchant(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all(receivers.map((r) => r.close()));
    await drop();
  });

  const service = (): TestService => {
    if (t === undefined) throw new Error('the service is not started yet (use it inside a test or a hook)');
    return t;
  };
  const merchant = (): CreatedMerchant => {
    if (m === undefined) throw new Error('the merchant is not made yet (use it inside a test or a hook)');
    return m;
  };
  const services = () => service().service.runtime.ctx.services;
  return {
    /** The service, once beforeAll ran. */
    get t(): TestService {
      return service();
    },
    /** The file's merchant, once beforeAll ran. */
    get m(): CreatedMerchant {
      return merchant();
    },
    services,
    sql: (q: string, p: unknown[] = []) => service().service.runtime.ctx.orm.em.getConnection().execute(q, p),
    /** The GraphQL answer's body, with the merchant's test secret key unless told another. */
    gql: async (query: string, variables: Record<string, unknown>, apiKey: string = merchant().keys.test.privateKey) =>
      (await graphql(service().baseUrl, query, variables, { 'api-key': apiKey })).body,
    codeOf: (res: any): string | undefined => res.errors?.[0]?.extensions?.code,
    /** A new order of `payer`, paid by card through 3-D Secure: its reference. */
    paid: (payer: CreatedMerchant = merchant(), card: string = options.card) =>
      payOrder(service().baseUrl, payer.keys.test, card, `${options.referencePrefix}-${process.pid}-${Date.now()}-${++counter}`),
    /** The events of the order's timeline (their names), as `reader` (test mode) reads them. */
    timelineOf: async (reference: string, reader: CreatedMerchant = merchant()) =>
      (await services().timeline.list(await services().auth.authenticate(reader.keys.test.privateKey), reference)).map((e) => e.event),
    /** A webhook receiver of the file's (closed after it) and a new merchant whose webhooks go to it. */
    hookedMerchant: async (): Promise<{ receiver: Receiver; merchant: CreatedMerchant }> => {
      const receiver = await startReceiver();
      receivers.push(receiver);
      return { receiver, merchant: await createTestMerchant(service(), { webhookUrl: receiver.url }) };
    },
  };
}
