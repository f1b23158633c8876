import fs from 'node:fs';
import path from 'node:path';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { createScratchDatabase, freePort } from '../support/scratch-database';
import { waitFor } from './events/helpers';
import { dockerInstructions, execForm } from '../support/dockerfile';
import { processMarker } from '../support/test-processes';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * What the container does, without Docker: the compose file's one-shot migrate command, then the
 * Dockerfile's CMD (tini aside) with the image's and the compose file's environment, on a
 * PostgreSQL database of this file's own, until the image's HEALTHCHECK command passes; then
 * SIGTERM, which tini passes on, ends it cleanly.
 */
describe('the container start command', () => {
  const instructions = dockerInstructions(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
  const runtimeStage = Math.max(...instructions.map((i) => i.stage));
  const runtime = instructions.filter((i) => i.stage === runtimeStage);
  const cmd = execForm(runtime.find((i) => i.keyword === 'CMD')!.args);
  const healthcheck = execForm(runtime.find((i) => i.keyword === 'HEALTHCHECK')!.args.replace(/^(--\S+ )+CMD /, ''));
  // ENV NAME=value … of the runtime stage.
  const imageEnv = Object.fromEntries(
    runtime.filter((i) => i.keyword === 'ENV').flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
  );
  const compose = parseYaml(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, any> };

  let scratch: { url: string; drop(): Promise<void> };
  const dataDir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'pgw-container-'));

  beforeAll(async () => {
    // dist/ is built by the run's global setup.
    scratch = await createScratchDatabase('container');
  });

  afterAll(async () => {
    await scratch?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('migrates with the migrate service, starts with the image CMD, passes the HEALTHCHECK and stops on SIGTERM', async () => {
    expect(cmd[0]).toBe('node');
    const port = await freePort();
    // The compose file's gateway environment, with its required secrets filled in as an operator would.
    const gatewayEnv = compose.services['gateway-1'].environment as Record<string, string>;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...processMarker(),
      ...imageEnv,
      ...gatewayEnv,
      DATABASE_URL: scratch.url,
      MASTER_KEY: 'cd'.repeat(32),
      ADMIN_TOKEN: 'container-admin-token-0123',
      METRICS_TOKEN: 'container-metrics-token-0123',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
    };
    expect(env.NODE_ENV).toBe('production');
    expect(env.MIGRATE_ON_START).toBe('false');

    const migrate = compose.services.migrate.command as string[];
    expect(migrate[0]).toBe('node');
    await run(process.execPath, migrate.slice(1), { cwd: ROOT, env, timeout: 120_000 });

    const child = spawn(process.execPath, cmd.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const healthy = async () => {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${stderr}`);
        return run(process.execPath, healthcheck.slice(1), { env, timeout: 5_000 }).then(
          () => true,
          () => false,
        );
      };
      await waitFor(healthy, 60_000, 'the HEALTHCHECK command');
      // The admin token from the environment works; no demo merchant on a PostgreSQL server.
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': env.ADMIN_TOKEN! },
        body: JSON.stringify({
          query: 'mutation { createMerchant(input: { name: "Container Ltd", country: "NG", supportEmail: "c@c.test", keyBits: 2048 }) { subsidiary { id } } }',
        }),
      });
      expect(((await response.json()) as any).data.createMerchant.subsidiary.id).toBe(1);
      expect(fs.existsSync(path.join(dataDir, 'admin.token'))).toBe(false);
    } finally {
      child.kill('SIGTERM');
      // Exit 0: the shutdown finished by itself, before the service's own deadline (9.5 s after
      // the signal, when it would exit 1 instead).
      expect(await exited).toBe(0);
    }
  }, 240_000);
});
