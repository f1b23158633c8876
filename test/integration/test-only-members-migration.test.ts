import 'reflect-metadata';
import { loadConfig } from '../../src/config';
import { openDatabase, type Database } from '../../src/database';
import { createScratchDatabase } from '../support/scratch-database';

const MIGRATION = 'Migration20261130030000_test_only_members';

/**
 * The migration that brings test-only members, run on a database with a team: members keep both
 * environments, and an open invitation the test key made becomes test-only.
 */
describe('migration: members invited with the test key work in test only', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let db: Database;
  const sql = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await db.orm.em.getConnection().execute(text, params)) as T[];

  beforeAll(async () => {
    scratch = await createScratchDatabase('test_only_members');
    db = await openDatabase(loadConfig({ DATABASE_URL: scratch.url, LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '2' }), { migrate: false });
    await db.orm.getMigrator().down({ migrations: [MIGRATION] });
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('marks the open invitations the test key made, and no member nor any other invitation', async () => {
    const [subsidiary] = await sql<{ id: number }>(
      `insert into subsidiary (name, country, support_email, webhook_secret_sealed) values ('Team', 'NG', 's@team.test', 'x') returning id`,
    );
    const id = subsidiary!.id;
    const invite = async (email: string, role: string, accepted: boolean, by: { actorType: string; environment: string | null }) => {
      const [row] = await sql<{ created_at: Date }>(
        `insert into member_invitation (subsidiary_id, email, role, token_hash, expires_at, accepted_at, created_at)
         values (?, ?, ?, md5(?) || md5(?), now() + interval '3 days', ?, now() - interval '1 hour') returning created_at`,
        [id, email, role, email, 'salt', accepted ? new Date() : null],
      );
      await sql(
        `insert into audit_entry (at, subsidiary_id, action, actor_type, actor_label, target, environment) values (?, ?, 'member.invited', ?, 'x', ?, ?)`,
        [row!.created_at, id, by.actorType, `${email} as ${role}`, by.environment],
      );
    };
    await invite('by-test-key@team.test', 'OWNER', false, { actorType: 'API_KEY', environment: 'test' });
    await invite('by-live-key@team.test', 'ADMIN', false, { actorType: 'API_KEY', environment: 'live' });
    await invite('by-member@team.test', 'VIEWER', false, { actorType: 'MEMBER', environment: 'test' });
    await invite('joined@team.test', 'ADMIN', true, { actorType: 'API_KEY', environment: 'test' });
    await sql(`insert into merchant_member (subsidiary_id, email, password_hash, role) values (?, 'joined@team.test', 'h', 'ADMIN')`, [id]);

    await db.orm.getMigrator().up();
    expect(await db.orm.getMigrator().getPendingMigrations()).toEqual([]);

    expect(await sql(`select email, test_only from member_invitation where subsidiary_id = ? order by email`, [id])).toEqual([
      { email: 'by-live-key@team.test', test_only: false },
      { email: 'by-member@team.test', test_only: false },
      { email: 'by-test-key@team.test', test_only: true },
      { email: 'joined@team.test', test_only: false },
    ]);
    expect(await sql(`select email, test_only from merchant_member where subsidiary_id = ?`, [id])).toEqual([{ email: 'joined@team.test', test_only: false }]);
  });
});
