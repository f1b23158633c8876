import { cli } from '../../support/cli';

describe('CLI help', () => {
  it.each([['--help'], ['-h'], ['help']])('`cli -- %s` prints the usage on stdout and exits 0, without any configuration', async (flag) => {
    const saved = { ...process.env };
    // No database, no master key: asking for help needs neither.
    delete process.env.DATABASE_URL;
    delete process.env.MASTER_KEY;
    process.env.DATA_DIR = '/nonexistent/pgw-help';
    try {
      const { code, out, err } = await cli([flag]);
      expect(code).toBe(0);
      expect(out).toMatch(/^Usage:\n/);
      for (const command of ['merchant:create', 'merchant:settings', 'migrate', 'master-key:rotate']) expect(out).toContain(command);
      expect(err).toBe('');
    } finally {
      process.env = saved;
    }
  });

  it('still answers an unknown command with the usage on stderr and exit 64', async () => {
    const { code, out, err } = await cli(['no-such-command']);
    expect(code).toBe(64);
    expect(out).toBe('');
    expect(err).toMatch(/^Usage:\n/);
  });
});
