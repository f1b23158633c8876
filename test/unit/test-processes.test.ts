import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { waitFor } from '../integration/events/helpers';
import { assertNoProcessLeft, findMarkedProcesses, processMarker, TEST_RUN_VARIABLE } from '../support/test-processes';

/** The check the global teardown runs, on a run id of this test's own (the real run is not disturbed). */
describe('processes left behind by a test run', () => {
  const runId = `probe-${randomUUID()}`;
  let children: ChildProcess[] = [];
  afterEach(async () => {
    await Promise.all(children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => (c.kill('SIGKILL'), exited(c))));
    children = [];
  });

  function spawnMarked(env: NodeJS.ProcessEnv, script = 'setInterval(() => {}, 60_000)'): ChildProcess {
    const child = spawn(process.execPath, ['-e', script], { env, stdio: 'ignore' });
    children.push(child);
    return child;
  }

  it('finds a live process carrying the run id, and fails naming it, then kills it', async () => {
    const child = spawnMarked({ PATH: process.env.PATH, [TEST_RUN_VARIABLE]: runId });
    await waitForSpawn(child);
    // One that carries another run's id is not this run's business.
    await waitForSpawn(spawnMarked({ PATH: process.env.PATH, [TEST_RUN_VARIABLE]: `${runId}-other` }));

    expect(findMarkedProcesses(runId)).toEqual([{ pid: child.pid, command: expect.stringContaining('setInterval') }]);
    expect(() => assertNoProcessLeft(runId)).toThrow(new RegExp(`1 process\\(es\\) started by this test run were still running[^]*pid ${child.pid}: `));
    // It killed what it found: the next check passes.
    expect(await exited(child)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(findMarkedProcesses(runId)).toEqual([]);
    expect(() => assertNoProcessLeft(runId)).not.toThrow();
  });

  it('finds a grandchild too: the marker is inherited through the default environment', async () => {
    // A child that starts its own child with the default environment, then reports its pid.
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' }); console.log(c.pid); setInterval(() => {}, 60_000);`,
      ],
      { env: { PATH: process.env.PATH, [TEST_RUN_VARIABLE]: runId }, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    children.push(parent);
    const grandchild = Number((await new Promise<Buffer>((resolve) => parent.stdout!.once('data', resolve))).toString().trim());
    expect(
      findMarkedProcesses(runId)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([parent.pid, grandchild].sort());
    expect(() => assertNoProcessLeft(runId)).toThrow(/2 process\(es\)/);
    await exited(parent);
    // The grandchild is not ours to wait for: it is gone once the kernel has delivered the kill.
    await waitFor(() => findMarkedProcesses(runId).length === 0, 5000, 'the killed grandchild to end');
  });

  it("gives the run's id to a process started with an environment of its own", () => {
    expect(processMarker()).toEqual({ [TEST_RUN_VARIABLE]: process.env[TEST_RUN_VARIABLE] });
    expect(process.env[TEST_RUN_VARIABLE]).toMatch(/^\d+-[0-9a-z]+$/);
  });
});

function waitForSpawn(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}
