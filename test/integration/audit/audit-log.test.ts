import { startTestService, type TestService } from '../../support/service';
import { graphql, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { apiKeyHint } from '../../../src/merchants/key-format';
import { addMember, ownerOf, signInMember } from '../../support/members';

const AUDIT_LOG = `query ($first: Int, $after: String) {
  auditLog(first: $first, after: $after) {
    edges { cursor node { id at action actorType actorLabel target ip environment } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const linkBody = { Name: 'Gym', Description: 'Monthly access', PaymentType: 'SC', Currency: 'NGN', AuthOption: 'AUTH', Amount: '5000' };
const CREATE_LINK = `mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id reference } }`;
const EDIT_LINK = `mutation ($id: Int!, $input: EditPaymentLinkInput!) { editPaymentLink(id: $id, input: $input) { id } }`;

describe('the audit log', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let key: string;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    key = m.keys.test.privateKey;
  });
  afterAll(async () => t.close());

  const sql = (query: string, params: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(query, params);
  const gql = async (query: string, variables: Record<string, unknown> = {}, apiKey = key) =>
    (await graphql(t.baseUrl, query, variables, { 'api-key': apiKey })).body;
  /** The merchant's entries of one action, as stored. */
  const entries = (action: string) =>
    sql(`select action, actor_type, actor_label, target, ip, environment from audit_entry where subsidiary_id = ? and action = ? order by id`, [
      m.subsidiary.id,
      action,
    ]);

  it('records the merchant’s creation by the operator', async () => {
    expect(await entries('merchant.created')).toEqual([
      {
        action: 'merchant.created',
        actor_type: 'ADMIN',
        actor_label: 'admin',
        target: `merchant ${m.subsidiary.id} ${m.subsidiary.name}`,
        ip: null,
        environment: null,
      },
    ]);
  });

  it('refuses to change or delete an entry, in the database itself', async () => {
    const [entry] = await sql(`select id from audit_entry where subsidiary_id = ? order by id limit 1`, [m.subsidiary.id]);
    await expect(sql(`update audit_entry set actor_label = 'someone else' where id = ?`, [entry.id])).rejects.toThrow(/append-only: UPDATE is refused/);
    await expect(sql(`delete from audit_entry where id = ?`, [entry.id])).rejects.toThrow(/append-only: DELETE is refused/);
    await expect(sql(`truncate audit_entry`)).rejects.toThrow(/append-only: TRUNCATE is refused/);
    const [after] = await sql(`select actor_label from audit_entry where id = ?`, [entry.id]);
    expect(after.actor_label).toBe('admin');
  });

  it('records a link created and edited over REST once each, naming the key by its hint and the request’s address', async () => {
    const before = { created: (await entries('link.created')).length, updated: (await entries('link.updated')).length };
    const created = await request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: key, body: linkBody });
    expect(created.status).toBe(200);
    const link = created.body.data.paymentLink;
    const edited = await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/edit`, { apiKey: key, body: { ...linkBody, Name: 'Gym (edited)' } });
    expect(edited.status).toBe(200);

    const made = (await entries('link.created')).slice(before.created);
    const changed = (await entries('link.updated')).slice(before.updated);
    const by = { actor_type: 'API_KEY', actor_label: apiKeyHint(key), ip: '127.0.0.1', environment: 'test' };
    expect(made).toEqual([{ action: 'link.created', target: `link ${link.id} ${link.reference}`, ...by }]);
    expect(changed).toEqual([{ action: 'link.updated', target: `link ${link.id} ${link.reference} edited`, ...by }]);
    // The hint names the key without being it.
    expect(apiKeyHint(key)).not.toBe(key);
    expect(JSON.stringify(await sql(`select * from audit_entry where subsidiary_id = ?`, [m.subsidiary.id]))).not.toContain(key);
  });

  it('records a link created and edited over GraphQL once each, with the same actor', async () => {
    const before = { created: (await entries('link.created')).length, updated: (await entries('link.updated')).length };
    const created = await gql(CREATE_LINK, { input: { name: 'Yoga', description: 'Weekly', paymentType: 'MC', amount: '1500' } });
    expect(created.errors).toBeUndefined();
    const link = created.data.createPaymentLink;
    const edited = await gql(EDIT_LINK, { id: link.id, input: { name: 'Yoga (evening)', description: 'Weekly', paymentType: 'MC', amount: '2000' } });
    expect(edited.errors).toBeUndefined();

    const by = { actor_type: 'API_KEY', actor_label: apiKeyHint(key), ip: '127.0.0.1', environment: 'test' };
    expect((await entries('link.created')).slice(before.created)).toEqual([{ action: 'link.created', target: `link ${link.id} ${link.reference}`, ...by }]);
    expect((await entries('link.updated')).slice(before.updated)).toEqual([
      { action: 'link.updated', target: `link ${link.id} ${link.reference} edited`, ...by },
    ]);
  });

  it('records disabling a link, and nothing for asking again for the state it is already in', async () => {
    const link = (await gql(CREATE_LINK, { input: { name: 'Pilates', description: 'Weekly', paymentType: 'MC', amount: '1000' } })).data.createPaymentLink;
    const before = (await entries('link.updated')).length;
    for (let i = 0; i < 2; i++) {
      expect((await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/disable`, { apiKey: key })).status).toBe(200);
    }
    expect((await entries('link.updated')).slice(before).map((e: any) => e.target)).toEqual([`link ${link.id} ${link.reference} disabled`]);
  });

  it('records nothing for a change that is refused', async () => {
    const before = (await entries('link.created')).length;
    const refused = await gql(CREATE_LINK, { input: { name: 'Nope', description: 'x', paymentType: 'MC', amount: '1000' } }, m.keys.test.publicKey);
    expect(refused.errors[0].extensions.code).toBe('FORBIDDEN');
    const invalid = await request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: key, body: { ...linkBody, Amount: '-5' } });
    expect(invalid.status).toBe(400);
    expect((await entries('link.created')).length).toBe(before);
  });

  it('records settings, webhook URL and signing secret changes and key rotations of the environment', async () => {
    const other = await createTestMerchant(t);
    const k = other.keys.test.privateKey;
    const ask = (query: string, variables: Record<string, unknown> = {}) => gql(query, variables, k);
    expect((await ask(`mutation { updateMerchantSettings(input: { feeBearer: CUSTOMER }) { feeBearer } }`)).errors).toBeUndefined();
    expect((await ask(`mutation { setWebhookUrl(url: "https://merchant.example/hooks") { webhookUrl } }`)).errors).toBeUndefined();
    expect((await ask(`mutation { rotateWebhookSecret { webhookSecret } }`)).errors).toBeUndefined();
    const rotated = await ask(`mutation { rotateKeys(input: { keys: [PUBLIC] }) { publicKey } }`);
    expect(rotated.errors).toBeUndefined();
    const rows = await sql(`select action, target, actor_label from audit_entry where subsidiary_id = ? and actor_type = 'API_KEY' order by id`, [
      other.subsidiary.id,
    ]);
    expect(rows).toEqual([
      { action: 'settings.updated', target: 'feeBearer customer', actor_label: apiKeyHint(k) },
      { action: 'webhook.url_set', target: 'https://merchant.example/hooks', actor_label: apiKeyHint(k) },
      { action: 'webhook.secret_rotated', target: 'signing secret (overlap 0 s)', actor_label: apiKeyHint(k) },
      { action: 'keys.rotated', target: 'public key (grace 0 s)', actor_label: apiKeyHint(k) },
    ]);
  });

  it('records no sign-in for an api-key: the dashboard refuses keys before looking at them', async () => {
    const other = await createTestMerchant(t);
    const signIn = (privateKey: string) => request(t.baseUrl, 'POST', '/dashboard/session', { body: { privateKey } });
    expect((await signIn(other.keys.live.privateKey)).status).toBe(400);
    expect((await signIn(other.keys.test.publicKey)).status).toBe(400);
    expect(await sql(`select action from audit_entry where subsidiary_id = ? and action like 'session.%'`, [other.subsidiary.id])).toEqual([]);
  });

  describe('auditLog over GraphQL', () => {
    it('is refused to the public key (FORBIDDEN)', async () => {
      const res = await gql(AUDIT_LOG, {}, m.keys.test.publicKey);
      expect(res.data).toBeNull();
      expect(res.errors[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    });

    it('pages the entries newest first, without gaps or repeats', async () => {
      const other = await createTestMerchant(t);
      const k = other.keys.test.privateKey;
      const references: string[] = [];
      for (let i = 0; i < 3; i++)
        references.push(
          (await gql(CREATE_LINK, { input: { name: `L${i}`, description: 'x', paymentType: 'MC', amount: '100' } }, k)).data.createPaymentLink.reference,
        );

      const seen: any[] = [];
      let after: string | null = null;
      for (;;) {
        const page: any = await gql(AUDIT_LOG, { first: 2, after }, k);
        expect(page.errors).toBeUndefined();
        seen.push(...page.data.auditLog.edges.map((e: any) => e.node));
        if (!page.data.auditLog.pageInfo.hasNextPage) break;
        after = page.data.auditLog.pageInfo.endCursor;
      }
      expect(seen.map((e) => [e.action, e.target?.split(' ')[2] ?? null])).toEqual([
        ['link.created', references[2]],
        ['link.created', references[1]],
        ['link.created', references[0]],
        ['merchant.created', other.subsidiary.name.split(' ')[0]],
      ]);
      expect(seen[0]).toMatchObject({ actorType: 'API_KEY', actorLabel: apiKeyHint(k), ip: '127.0.0.1', environment: 'TEST' });
      expect(seen[3]).toMatchObject({ actorType: 'ADMIN', actorLabel: 'admin', ip: null, environment: null });
      const ids = seen.map((e) => Number(e.id));
      expect([...ids].sort((a, b) => b - a)).toEqual(ids);
      expect(seen.map((e) => e.at)).toEqual([...seen.map((e) => e.at)].sort().reverse());
    });

    it('shows readers that reach the test environment only no member addresses: not on sign-ins and team changes, not on what a member did in test; api-key entries keep theirs', async () => {
      const other = await createTestMerchant(t);
      const owner = await signInMember(t.baseUrl, await ownerOf(t.baseUrl, other));
      const byOwner = await graphql(
        t.baseUrl,
        CREATE_LINK,
        { input: { name: 'By the owner', description: 'x', paymentType: 'MC', amount: '100' } },
        owner.headers('test'),
      );
      expect(byOwner.body.errors).toBeUndefined();
      await gql(CREATE_LINK, { input: { name: 'By the key', description: 'x', paymentType: 'MC', amount: '100' } }, other.keys.test.privateKey);
      const testOnly = await addMember(t.baseUrl, other.keys.test.privateKey, `test-owner-${other.subsidiary.id}@merchant.test`, 'OWNER');
      const session = await signInMember(t.baseUrl, testOnly);
      const signIns = (body: any) =>
        body.data.auditLog.edges
          .map((e: any) => e.node)
          .filter((n: any) => n.action === 'session.signed_in' || n.action === 'member.invited' || (n.action === 'link.created' && n.actorType === 'MEMBER'));
      const live = signIns(await gql(AUDIT_LOG, {}, other.keys.live.privateKey));
      expect(live.length).toBeGreaterThanOrEqual(3);
      for (const entry of live) expect(entry.ip).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
      const asTestKey = signIns(await gql(AUDIT_LOG, {}, other.keys.test.privateKey));
      const asTestOnlyMember = signIns((await graphql(t.baseUrl, AUDIT_LOG, {}, session.headers('test'))).body);
      // The live key reads the merchant-wide entries, not the test environment's: the member's link is in the test log only.
      expect(asTestKey.filter((e: any) => e.environment === null).map((e: any) => e.id)).toEqual(live.map((e: any) => e.id));
      expect(asTestKey.filter((e: any) => e.action === 'link.created')).toHaveLength(1);
      for (const seen of [asTestKey, asTestOnlyMember]) for (const entry of seen) expect(entry.ip).toBeNull();
      const keyEntry = (await gql(AUDIT_LOG, { first: 50 }, other.keys.test.privateKey)).data.auditLog.edges
        .map((e: any) => e.node)
        .find((n: any) => n.action === 'link.created' && n.actorType === 'API_KEY');
      expect(keyEntry.ip).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
    });

    it('shows an api-key its own environment’s entries and the merchant’s, not the other environment’s', async () => {
      const other = await createTestMerchant(t);
      await gql(CREATE_LINK, { input: { name: 'Live', description: 'x', paymentType: 'MC', amount: '100' } }, other.keys.live.privateKey);
      const test = await gql(AUDIT_LOG, {}, other.keys.test.privateKey);
      const live = await gql(AUDIT_LOG, {}, other.keys.live.privateKey);
      expect(test.data.auditLog.edges.map((e: any) => e.node.action)).toEqual(['merchant.created']);
      expect(live.data.auditLog.edges.map((e: any) => e.node.action)).toEqual(['link.created', 'merchant.created']);
    });
  });
});
