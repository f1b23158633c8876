import { startTestService, type TestService } from '../../support/service';
import { graphql, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { ownerOf, signInMember } from '../../support/members';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const AUDIT_LOG = `query ($filter: AuditLogFilter) {
  auditLog(first: 50, filter: $filter) { edges { node { at action actorType actorLabel target } } }
}`;

describe('filtering and exporting the audit log', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let key: string;

  const sql = (query: string, params: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(query, params);
  /** An entry written as the service writes them (the table takes inserts only). */
  const entry = (at: string, action: string, actorType: string, actorLabel: string, target: string | null, environment: string | null = 'test') =>
    sql(`insert into audit_entry (at, subsidiary_id, action, actor_type, actor_label, target, ip, environment) values (?, ?, ?, ?, ?, ?, ?, ?)`, [
      at,
      m.subsidiary.id,
      action,
      actorType,
      actorLabel,
      target,
      '203.0.113.9',
      environment,
    ]);

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    key = m.keys.test.privateKey;
    await entry('2020-01-01T10:00:00.000Z', 'link.created', 'API_KEY', 'PGW-…abcd', 'link 1 "Gym, monthly"');
    await entry('2020-01-02T10:00:00.000Z', 'link.updated', 'MEMBER', '=HYPERLINK("http://evil.example")', '+1 disabled');
    await entry('2020-01-03T10:00:00.000Z', 'keys.rotated', 'ADMIN', 'admin', '-private key\nline two');
    await entry('2020-01-04T10:00:00.000Z', 'link.created', 'SYSTEM', '@system', null, null);
    // The live environment's entry is never in a test key's log.
    await entry('2020-01-02T12:00:00.000Z', 'link.created', 'API_KEY', 'live key', 'live link', 'live');
  });
  afterAll(async () => t.close());

  const log = async (filter: Record<string, unknown> | null, apiKey = key) => (await graphql(t.baseUrl, AUDIT_LOG, { filter }, { 'api-key': apiKey })).body;
  const old = { from: '2020-01-01T00:00:00.000Z', to: '2020-02-01T00:00:00.000Z' };

  it('narrows auditLog by action, actor kind and a time range (from inclusive, to exclusive), newest first', async () => {
    const created = await log({ ...old, action: 'link.created' });
    expect(created.errors).toBeUndefined();
    expect(created.data.auditLog.edges.map((e: any) => [e.node.at, e.node.actorType])).toEqual([
      ['2020-01-04T10:00:00.000Z', 'SYSTEM'],
      ['2020-01-01T10:00:00.000Z', 'API_KEY'],
    ]);
    const members = await log({ ...old, actorType: 'MEMBER' });
    expect(members.data.auditLog.edges.map((e: any) => e.node.action)).toEqual(['link.updated']);
    const range = await log({ from: '2020-01-02T10:00:00.000Z', to: '2020-01-03T10:00:00.000Z' });
    expect(range.data.auditLog.edges.map((e: any) => e.node.at)).toEqual(['2020-01-02T10:00:00.000Z']);
    // Without a filter, today's entries (the merchant's creation) are there too.
    const all = await log(null);
    expect(all.data.auditLog.edges.map((e: any) => e.node.action)).toContain('merchant.created');
  });

  it('refuses an unknown action, or a range that ends before it starts, as bad input', async () => {
    const unknown = await log({ action: 'link.exploded' });
    expect(unknown.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(unknown.errors[0].message).toMatch(/action filter must be one of/);
    const backwards = await log({ from: '2020-02-01T00:00:00Z', to: '2020-01-01T00:00:00Z' });
    expect(backwards.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  const csv = (query: string, headers: Record<string, string> = { 'api-key': key }) =>
    request(t.baseUrl, 'GET', `/dashboard/api/audit.csv?${query}`, { headers });

  it('exports the filtered log as CSV: a header row, quoted cells, formulas defused', async () => {
    const res = await csv(new URLSearchParams(old).toString());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="audit-log-test.csv"');
    expect(res.text).toBe(
      [
        'at,action,actorType,actorLabel,target,ip,environment',
        // The test key sees addresses on its environment's api-key entries only: not the operator's, a member's or a merchant-wide one.
        "2020-01-04T10:00:00.000Z,link.created,SYSTEM,'@system,,,",
        '2020-01-03T10:00:00.000Z,keys.rotated,ADMIN,admin,"\'-private key\nline two",,test',
        '2020-01-02T10:00:00.000Z,link.updated,MEMBER,"\'=HYPERLINK(""http://evil.example"")",\'+1 disabled,,test',
        '2020-01-01T10:00:00.000Z,link.created,API_KEY,PGW-…abcd,"link 1 ""Gym, monthly""",203.0.113.9,test',
        '',
      ].join('\r\n'),
    );
    const members = await csv(new URLSearchParams({ ...old, actorType: 'MEMBER', action: 'link.updated' }).toString());
    expect(members.text.split('\r\n').map((line) => line.split(',')[0])).toEqual(['at', '2020-01-02T10:00:00.000Z', '']);
  });

  it('exports for the dashboard session of the environment in view', async () => {
    const { cookie } = await signInMember(t.baseUrl, await ownerOf(t.baseUrl, m));
    const res = await csv(new URLSearchParams({ ...old, environment: 'live' }).toString(), { cookie });
    expect(res.status).toBe(200);
    // The live environment's entries and the merchant-wide ones; never the test environment's.
    expect(res.text.split('\r\n').slice(1, -1)).toEqual([
      "2020-01-04T10:00:00.000Z,link.created,SYSTEM,'@system,,203.0.113.9,",
      '2020-01-02T12:00:00.000Z,link.created,API_KEY,live key,live link,203.0.113.9,live',
    ]);
  });

  it('refuses the public key, no key, and a bad filter, before any CSV', async () => {
    const publicKey = await csv('', { 'api-key': m.keys.test.publicKey });
    expect(publicKey.status).toBe(403);
    expect(publicKey.text).not.toContain('action,');
    expect((await csv('', {})).status).toBe(401);
    const bad = await csv('actorType=ROBOT');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/actorType filter must be one of/);
    expect((await csv('from=yesterday')).status).toBe(400);
  });
});
