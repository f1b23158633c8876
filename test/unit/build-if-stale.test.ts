import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { acquireLock, buildIfStale, LOCK, STAMP, staleness } from '../../scripts/build-if-stale';

const SCRIPT = path.resolve(__dirname, '../../scripts/build-if-stale.js');
const INPUTS = ['src', 'tsconfig.json'];

/** A project folder with two sources and a config, all dated `at`. */
function project(at: Date): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-stale-'));
  fs.mkdirSync(path.join(root, 'src/nested'), { recursive: true });
  for (const file of ['src/a.ts', 'src/nested/b.ts', 'tsconfig.json']) fs.writeFileSync(path.join(root, file), '// source\n');
  for (const entry of ['src/a.ts', 'src/nested/b.ts', 'src/nested', 'src', 'tsconfig.json']) fs.utimesSync(path.join(root, entry), at, at);
  return root;
}

/** A build that records its calls and writes one output file. */
function fakeBuild() {
  const calls: string[] = [];
  return {
    calls,
    build: async (root: string) => {
      calls.push(root);
      fs.writeFileSync(path.join(root, 'dist', 'out.js'), 'built\n');
    },
  };
}

const hourAgo = () => new Date(Date.now() - 3600_000);
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});
const newProject = () => {
  const root = project(hourAgo());
  roots.push(root);
  return root;
};

describe('build-if-stale', () => {
  it('is stale before the first build, and fresh after it until a source changes', async () => {
    const root = newProject();
    expect(staleness(root, INPUTS)).toEqual({ stale: true, reason: expect.stringContaining('never built') });

    const { calls, build } = fakeBuild();
    expect(await buildIfStale({ root, inputs: INPUTS, build })).toMatchObject({ built: true });
    expect(fs.existsSync(path.join(root, STAMP))).toBe(true);
    expect(staleness(root, INPUTS).stale).toBe(false);
    expect(await buildIfStale({ root, inputs: INPUTS, build })).toEqual({ built: false, reason: 'fresh' });
    expect(calls).toHaveLength(1);

    // An edit deep in a source folder makes it stale, and names the file.
    // (the build is dated back a second: file dates come from a coarser clock than Date.now())
    fs.writeFileSync(path.join(root, 'src/nested/b.ts'), '// edited\n');
    const builtAt = new Date(fs.statSync(path.join(root, 'src/nested/b.ts')).mtimeMs - 1000);
    fs.utimesSync(path.join(root, STAMP), builtAt, builtAt);
    expect(staleness(root, INPUTS)).toEqual({ stale: true, reason: 'src/nested/b.ts changed since the last build' });
    await buildIfStale({ root, inputs: INPUTS, build });
    expect(calls).toHaveLength(2);
    expect(staleness(root, INPUTS).stale).toBe(false);
  });

  it('counts a deleted source and an edited config file as changes', async () => {
    const root = newProject();
    await buildIfStale({ root, inputs: INPUTS, build: fakeBuild().build });
    const stampAt = fs.statSync(path.join(root, STAMP)).mtime;
    const later = new Date(stampAt.getTime() + 5000);

    fs.rmSync(path.join(root, 'src/a.ts'));
    fs.utimesSync(path.join(root, 'src'), later, later);
    expect(staleness(root, INPUTS)).toEqual({ stale: true, reason: 'src changed since the last build' });

    // Put the folder's date back: fresh again; then the config file alone changes.
    fs.utimesSync(path.join(root, 'src'), hourAgo(), hourAgo());
    expect(staleness(root, INPUTS).stale).toBe(false);
    fs.utimesSync(path.join(root, 'tsconfig.json'), later, later);
    expect(staleness(root, INPUTS)).toEqual({ stale: true, reason: 'tsconfig.json changed since the last build' });
  });

  it('dates the stamp when the build started, so an edit made during the build stays stale', async () => {
    const root = newProject();
    await buildIfStale({
      root,
      inputs: INPUTS,
      build: async () => {
        // The edit lands while the build runs, after the build read the sources.
        const during = new Date(Date.now() + 2000);
        fs.writeFileSync(path.join(root, 'src/a.ts'), '// edited during the build\n');
        fs.utimesSync(path.join(root, 'src/a.ts'), during, during);
      },
    });
    expect(staleness(root, INPUTS)).toEqual({ stale: true, reason: 'src/a.ts changed since the last build' });
  });

  it('builds once when two callers find it stale at the same time', async () => {
    const root = newProject();
    const { calls, build } = fakeBuild();
    let releaseFirst!: () => void;
    const firstMayFinish = new Promise<void>((resolve) => (releaseFirst = resolve));
    const slowBuild = async (r: string) => {
      await firstMayFinish;
      await build(r);
    };
    const first = buildIfStale({ root, inputs: INPUTS, build: slowBuild });
    const second = buildIfStale({ root, inputs: INPUTS, build: slowBuild });
    // Both passed the first check; the first holds the lock, the second waits on it.
    await waitFor(() => fs.existsSync(path.join(root, LOCK)));
    releaseFirst();
    const results = await Promise.all([first, second]);
    expect(calls).toHaveLength(1);
    expect(results.map((r) => r.built).sort()).toEqual([false, true]);
    expect(results.find((r) => !r.built)!.reason).toBe('built by another caller');
    expect(fs.existsSync(path.join(root, LOCK))).toBe(false);
  });

  it('takes over a lock left by a process that no longer runs', async () => {
    const root = newProject();
    fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
    // A pid that cannot be running: above the kernel's pid_max.
    fs.writeFileSync(path.join(root, LOCK), '4194399');
    const release = await acquireLock(root, { pollMs: 10, timeoutMs: 2000 });
    expect(fs.readFileSync(path.join(root, LOCK), 'utf8')).toBe(String(process.pid));
    release();
    expect(fs.existsSync(path.join(root, LOCK))).toBe(false);
  });

  it('with --check, exits 1 on a stale build and 0 on a fresh one, without building', async () => {
    const run = promisify(execFile);
    // This checkout itself: after a build it is fresh; a source dated in the future makes it stale.
    const copy = newProject();
    fs.mkdirSync(path.join(copy, 'scripts'));
    fs.copyFileSync(SCRIPT, path.join(copy, 'scripts/build-if-stale.js'));
    const check = () =>
      run(process.execPath, [path.join(copy, 'scripts/build-if-stale.js'), '--check']).then(
        (r) => ({ code: 0, stderr: r.stderr }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
    expect(await check()).toEqual({ code: 1, stderr: expect.stringContaining('stale: never built') });
    expect(fs.existsSync(path.join(copy, 'dist'))).toBe(false);

    fs.mkdirSync(path.join(copy, 'dist'));
    fs.writeFileSync(path.join(copy, STAMP), 'now\n');
    expect(await check()).toEqual({ code: 0, stderr: expect.stringContaining('fresh') });

    const future = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(copy, 'src/a.ts'), future, future);
    expect(await check()).toEqual({ code: 1, stderr: 'stale: src/a.ts changed since the last build\n' });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
