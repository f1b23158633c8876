import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { dockerInstructions, execForm } from '../support/dockerfile';

/**
 * Docker does not run here: the Dockerfile, docker-compose.yml and the nginx configuration are
 * kept honest by reading them. (test/integration/deployment-start.test.ts runs the image's start
 * command itself.)
 */
const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

function dockerfile() {
  const instructions = dockerInstructions(read('Dockerfile'));
  const last = Math.max(...instructions.map((i) => i.stage));
  const runtime = instructions.filter((i) => i.stage === last);
  const one = (keyword: string) => {
    const found = runtime.filter((i) => i.keyword === keyword);
    expect(found).toHaveLength(1);
    return found[0]!.args;
  };
  return { instructions, runtime, one };
}

describe('Dockerfile', () => {
  const { instructions, runtime, one } = dockerfile();
  const args = new Map(instructions.filter((i) => i.keyword === 'ARG' && i.args.includes('=')).map((i) => i.args.split('=') as [string, string]));
  const image = (from: string) => from.split(' ')[0]!.replace(/^\$\{(\w+)\}$/, (_m, name: string) => args.get(name) ?? '');

  it('builds in stages and runs a slim Node 20 image', () => {
    const froms = instructions.filter((i) => i.keyword === 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    // Pinned to an exact release (major.minor.patch), never a moving tag such as node:20-slim.
    for (const from of froms) expect(image(from.args)).toMatch(/^node:20\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/);
    // How to add digests is written down beside the pin.
    expect(read('Dockerfile')).toMatch(/digest/i);
    // The build stage installs everything and compiles; the runtime copies from earlier stages.
    const build = instructions.filter((i) => i.stage === 0);
    expect(build.some((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args) && !i.args.includes('--omit=dev'))).toBe(true);
    expect(build.some((i) => i.keyword === 'RUN' && /tsc -p tsconfig\.build\.json|npm run build/.test(i.args))).toBe(true);
    const copies = runtime.filter((i) => i.keyword === 'COPY' && i.args.startsWith('--from='));
    expect(copies.map((c) => c.args)).toEqual(expect.arrayContaining([expect.stringMatching(/node_modules/), expect.stringMatching(/dist/)]));
    // The runtime's node_modules come from an `npm ci --omit=dev` stage: production dependencies only.
    const modulesFrom = /--from=(\S+)/.exec(copies.find((c) => c.args.includes('node_modules'))!.args)![1]!;
    const modulesStage = instructions.findIndex((i) => i.keyword === 'FROM' && new RegExp(`\\bAS ${modulesFrom}$`, 'i').test(i.args));
    const stageOf = instructions[modulesStage]!.stage;
    expect(instructions.some((i) => i.stage === stageOf && i.keyword === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args))).toBe(true);
  });

  it('runs as a non-root user under tini, without npm or a shell at boot', () => {
    const user = one('USER');
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const entrypoint = execForm(one('ENTRYPOINT'));
    const cmd = execForm(one('CMD'));
    expect(entrypoint).toEqual(['/usr/bin/tini', '--']);
    // tini comes from the distribution at one exact version.
    const tini = args.get('TINI_VERSION');
    expect(tini).toMatch(/^\d+\.\d+\.\d+-\S+$/);
    expect(runtime.some((i) => i.keyword === 'RUN' && /apt-get install .*"?tini=\$\{TINI_VERSION\}"?/.test(i.args))).toBe(true);
    expect(cmd).toEqual(['node', 'dist/src/main.js']);
    expect([...entrypoint, ...cmd].join(' ')).not.toMatch(/\bnpm\b|\bsh\b|\bbash\b/);
    // The start command's file is what the build compiles (package.json's "start" runs the same file).
    expect(JSON.parse(read('package.json')).scripts.start).toBe(`node ${cmd[1]}`);
    expect(runtime.some((i) => i.keyword === 'RUN' && /\bnpm (ci|install)\b/.test(i.args))).toBe(false);
  });

  it('leaves the benchmarks out of the image', () => {
    // The runtime copies dist/ from the build stage: the build stage never sees bench/.
    expect(instructions.filter((i) => i.stage === 0 && i.keyword === 'COPY' && /^bench\b/.test(i.args))).toEqual([]);
    expect(instructions.filter((i) => /\bbench\b/.test(i.args) && i.keyword !== 'RUN')).toEqual([]);
  });

  it('checks readiness with a HEALTHCHECK on /health/ready', () => {
    const healthcheck = one('HEALTHCHECK');
    expect(healthcheck).toMatch(/--interval=\d+s/);
    expect(healthcheck).toMatch(/--start-period=\d+s/);
    const command = execForm(healthcheck.replace(/^(--\S+ )+CMD /, ''));
    expect(command[0]).toBe('node');
    expect(command.join(' ')).toContain('/health/ready');
  });

  it('ships the files the built code reads at run time, and keeps the build context small', () => {
    const copied = runtime.filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from=')).map((i) => i.args.split(' ')[0]!);
    // Everything src reads from its own folder beside the code (public assets of the pages).
    const publicDirs = fs
      .readdirSync(path.join(ROOT, 'src'), { recursive: true, withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name === 'public')
      .map((d) => path.relative(ROOT, path.join(d.parentPath, d.name)));
    expect(publicDirs.length).toBeGreaterThan(0);
    for (const dir of publicDirs) expect(copied).toContain(dir);
    const ignored = read('.dockerignore')
      .split(/\r?\n/)
      .map((l) => l.trim());
    for (const entry of ['node_modules', 'dist', '.git', '.data']) expect(ignored).toContain(entry);
  });

  it('the compiled service needs only production dependencies', () => {
    // Every package the service's source imports at run time is a dependency, not a dev dependency.
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const builtin = new Set(require('node:module').builtinModules as string[]);
    // Development-only fallbacks, with why the built image never takes them.
    const devOnly: Record<string, string> = {
      'checkout/browser-client.ts: typescript': 'transpiles the SDK when dist/packages/sdk/src/encryption.js is missing; the build emits it',
      'dashboard/build.ts: esbuild': 'bundles the dashboard when dist/dashboard is missing; the build stage bundles it',
    };
    const missing: string[] = [];
    for (const file of fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[]) {
      if (!file.endsWith('.ts')) continue;
      const source = fs.readFileSync(path.join(ROOT, 'src', file), 'utf8');
      for (const m of source.matchAll(/^(?!import type)[^\n]*?(?:from |import\(|require\()\s*'([^'.][^']*)'/gm)) {
        const spec = m[1]!.replace(/^node:/, '');
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!builtin.has(name) && !pkg.dependencies[name] && !devOnly[`${file}: ${name}`]) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
    // The build stage compiles what the fallback above stands in for.
    expect(instructions.some((i) => i.stage === 0 && i.keyword === 'COPY' && /^packages\b/.test(i.args))).toBe(true);
    expect(instructions.some((i) => i.stage === 0 && i.keyword === 'COPY' && /^web\b/.test(i.args))).toBe(true);
    expect(instructions.some((i) => i.stage === 0 && i.keyword === 'RUN' && i.args.includes('dist/src/dashboard/build.js'))).toBe(true);
  });
});

describe('docker-compose.yml', () => {
  const compose = parseYaml(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, any>;
    volumes?: Record<string, unknown>;
  };
  const services = compose.services;
  const gateways = Object.keys(services).filter((name) => /^gateway/.test(name));

  it('pins every image to an exact version', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue; // built here from the pinned Dockerfile
      expect(`${name}: ${service.image}`).toMatch(/^[\w-]+: [\w./-]+:v?\d+\.\d+(\.\d+)?(-[a-z]+)?(@sha256:[0-9a-f]{64})?$/);
    }
    expect(read('docs/operations.md')).toMatch(/imagetools inspect/);
  });

  it('has no default database password: compose refuses to start without one', () => {
    const env = (s: any) => s.environment as Record<string, string>;
    expect(env(services.postgres).POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    for (const name of [...gateways, 'migrate']) {
      expect(env(services[name]).DATABASE_URL).toContain('${POSTGRES_PASSWORD:?');
      expect(env(services[name]).DATABASE_URL).not.toMatch(/POSTGRES_PASSWORD:-/);
    }
    expect(read('docker-compose.yml')).not.toMatch(/:-pgw\}/);
  });

  it('scrapes every instance with Prometheus, with the metrics token', () => {
    const prometheus = services.prometheus;
    expect(prometheus.image).toMatch(/^prom\/prometheus:/);
    const mount = (prometheus.volumes as string[]).find((v) => v.endsWith(':/etc/prometheus/prometheus.yml:ro'))!;
    const config = parseYaml(read(mount.split(':')[0]!)) as {
      scrape_configs: { metrics_path: string; authorization: { type: string }; static_configs: { targets: string[] }[] }[];
    };
    const job = config.scrape_configs[0]!;
    expect(job.metrics_path).toBe('/metrics');
    expect(job.authorization.type).toBe('Bearer');
    expect(job.static_configs.flatMap((c) => c.targets).sort()).toEqual(gateways.map((g) => `${g}:4000`).sort());
    for (const name of gateways) expect(services[name].environment.METRICS_TOKEN).toMatch(/^\$\{METRICS_TOKEN:\?/);
    expect(prometheus.environment.METRICS_TOKEN).toBe(services[gateways[0]!].environment.METRICS_TOKEN);
  });

  it('documents how to create the first merchant under compose', () => {
    expect(read('docs/operations.md')).toContain('docker compose exec gateway-1 node dist/src/cli/main.js merchant:create');
  });

  it('runs PostgreSQL with a health check and a volume', () => {
    const pg = services.postgres;
    expect(pg.image).toMatch(/^postgres:1[6-9]\b/);
    expect(pg.healthcheck.test.join(' ')).toContain('pg_isready');
    const volume = (pg.volumes as string[]).find((v) => v.endsWith(':/var/lib/postgresql/data'))!;
    expect(volume).toBeDefined();
    expect(compose.volumes).toHaveProperty(volume.split(':')[0]!);
    expect(pg.restart).toBe('unless-stopped');
  });

  it('runs three instances of the image with the same secrets, after the database is healthy and migrated', () => {
    expect(gateways).toHaveLength(3);
    for (const name of gateways) {
      const g = services[name];
      expect(g.build).toBe('.');
      expect(g.command).toBeUndefined(); // the image's CMD: node under tini, no npm at boot
      expect(g.restart).toMatch(/^(unless-stopped|always|on-failure)/);
      expect(g.depends_on.postgres.condition).toBe('service_healthy');
      expect(g.depends_on.migrate.condition).toBe('service_completed_successfully');
      expect(g.environment.DATABASE_URL).toMatch(/^postgres:\/\/.+@postgres:5432\//);
      expect(g.environment.MASTER_KEY).toMatch(/^\$\{MASTER_KEY:\?/); // required, never defaulted
      expect(g.environment.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?/);
      expect(g.environment.MIGRATE_ON_START).toBe('false');
      expect(g.healthcheck.test.join(' ')).toContain('/health/ready');
      expect(g.ports).toBeUndefined(); // reached through the balancer only
    }
    const [a, ...others] = gateways.map((name) => services[name]);
    for (const other of others) {
      expect(other.environment).toEqual(a.environment);
      expect(other.image).toBe(a.image);
    }
    // Migrations run once, from the same image, before the instances start.
    expect(services.migrate.command).toEqual(['node', 'dist/src/cli/main.js', 'migrate']);
    expect(services.migrate.image).toBe(a.image);
    expect(services.migrate.environment.DATABASE_URL).toBe(a.environment.DATABASE_URL);
    expect(services.migrate.environment.MASTER_KEY).toBe(a.environment.MASTER_KEY);
  });

  it('shares the rate-limit counters and the events of every instance through Valkey, which is never published', () => {
    const valkey = services.valkey;
    expect(valkey.image).toMatch(/^valkey\/valkey:8\./);
    expect(valkey.restart).toBe('unless-stopped');
    expect(valkey.healthcheck.test.join(' ')).toContain('valkey-cli ping');
    // Counters live a minute: nothing to persist.
    expect(valkey.command).toEqual(['valkey-server', '--save', '', '--appendonly', 'no']);
    expect(valkey.volumes).toBeUndefined();
    expect(valkey.ports).toBeUndefined();
    for (const name of gateways) {
      expect(services[name].environment.REDIS_URL).toBe('redis://valkey:6379');
      expect(services[name].depends_on.valkey.condition).toBe('service_healthy');
    }
  });

  it('puts nginx in front: it starts beside booting instances, is healthy once one instance is ready, publishes the only public port', () => {
    const lb = services.lb;
    expect(lb.image).toMatch(/^nginx:/);
    expect(lb.restart).toBe('unless-stopped');
    // Healthy when a request through the balancer reaches a ready instance (at least one).
    expect(lb.healthcheck.test.join(' ')).toContain('http://127.0.0.1/health/ready');
    // Not held back until every instance is healthy: one instance is enough to serve.
    for (const name of gateways) expect(lb.depends_on[name].condition).toBe('service_started');
    const published = Object.entries(services)
      .filter(([, s]) => (s.ports as string[] | undefined)?.some((p) => !p.startsWith('127.0.0.1:')))
      .map(([name]) => name);
    expect(published).toEqual(['lb']);
    const mount = (lb.volumes as string[]).find((v) => v.includes('/etc/nginx/'))!;
    expect(mount).toMatch(/:ro$/);
    expect(fs.existsSync(path.join(ROOT, mount.split(':')[0]!))).toBe(true);
  });

  describe('nginx configuration', () => {
    const conf = read('deploy/nginx.conf').replace(/#[^\n]*/g, '');
    const block = (name: string) => {
      const start = conf.indexOf(name);
      expect(start).toBeGreaterThanOrEqual(0);
      let depth = 0;
      for (let i = conf.indexOf('{', start); i < conf.length; i++) {
        if (conf[i] === '{') depth++;
        if (conf[i] === '}' && --depth === 0) return conf.slice(start, i + 1);
      }
      throw new Error(`unclosed ${name}`);
    };

    it('balances round-robin over exactly the compose instances', () => {
      const upstream = block('upstream gateway');
      const servers = [...upstream.matchAll(/^\s*server\s+([\w.-]+):(\d+)/gm)].map((m) => `${m[1]}:${m[2]}`);
      expect(servers.sort()).toEqual(gateways.map((g) => `${g}:4000`).sort());
      expect(upstream).not.toMatch(/\b(ip_hash|hash|least_conn|random)\b/); // nginx's default is round-robin
    });

    it("re-resolves the instances through Docker's DNS instead of resolving them once at start", () => {
      expect(conf).toMatch(/^\s*resolver\s+127\.0\.0\.11\b[^;]*\bvalid=\d+s/m);
      const upstream = block('upstream gateway');
      expect(upstream).toMatch(/^\s*zone\s+\w+\s+\d+k;/m);
      const servers = [...upstream.matchAll(/^\s*server\s+[^;]+;/gm)].map((m) => m[0]);
      expect(servers.length).toBe(gateways.length);
      for (const server of servers) expect(server).toMatch(/\sresolve\b/);
      // `resolve` in an upstream needs nginx 1.27.3 or later.
      const [major, minor, patch] = /^nginx:(\d+)\.(\d+)\.(\d+)/.exec(services.lb.image)!.slice(1).map(Number) as [number, number, number];
      expect(major * 1e6 + minor * 1e3 + patch).toBeGreaterThanOrEqual(1027003);
    });

    it('passes WebSocket upgrades through on /graphql and proxies everything to the upstream', () => {
      const graphql = block('location /graphql');
      expect(graphql).toMatch(/proxy_pass\s+http:\/\/gateway;/);
      expect(graphql).toMatch(/proxy_set_header\s+Upgrade\s+\$http_upgrade;/);
      expect(graphql).toMatch(/proxy_set_header\s+Connection\s+\$connection_upgrade;/);
      expect(conf).toMatch(/map\s+\$http_upgrade\s+\$connection_upgrade\s*\{[^}]*default\s+upgrade;/);
      expect(conf).toMatch(/proxy_http_version\s+1\.1;/);
      expect(block('location / ')).toMatch(/proxy_pass\s+http:\/\/gateway;/);
      expect(conf).toMatch(/proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;/);
    });
  });
});
