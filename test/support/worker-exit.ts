import { createHook } from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TEST_RUN_VARIABLE } from './test-processes';

/**
 * Why a Jest worker did not exit. At the end of a run Jest tells each worker to stop and gives it
 * half a second to leave on its own; a worker whose event loop is still held by something (a
 * timer, a socket, a worker thread) is killed and Jest prints "A worker process has failed to exit
 * gracefully", naming nothing. The per-file check (open-handles.ts) sees only what a file opened
 * between its setup and its teardown; this watch covers the worker's whole life.
 *
 * `watchWorkerExit()` (once per worker process) remembers every live resource with the test file
 * that was running when it was created. When Jest tells the worker to stop and the worker is
 * still alive 300 ms later, it writes what is still open, and from which file, to a report in
 * the run's directory; the global teardown prints the reports (`reportWorkersThatDidNotExit`).
 */

const INSTALLED = Symbol.for('pgw.test.worker-exit-watch');
/** Short-lived requests that never hold a worker on their own. */
const IGNORED = new Set([
  'PROMISE',
  'TickObject',
  'Microtask',
  'Immediate',
  'FSREQCALLBACK',
  'FSREQPROMISE',
  'WRITEWRAP',
  'SHUTDOWNWRAP',
  'GETADDRINFOREQWRAP',
  'QUERYWRAP',
  'TCPCONNECTWRAP',
  'PIPECONNECTWRAP',
  'ZLIB',
  'RANDOMBYTESREQUEST',
  'PBKDF2REQUEST',
  'SCRYPTREQUEST',
  'KEYPAIRGENREQUEST',
  'SIGNREQUEST',
  'HASHREQUEST',
  'CIPHERREQUEST',
  'DERIVEBITSREQUEST',
  'CHECKPRIMEREQUEST',
]);

interface Live {
  type: string;
  file: string;
  // Weakly: a resource whose `destroy` comes when it is garbage collected must stay collectable.
  resource: WeakRef<{ hasRef?: () => boolean }>;
}

let currentFile = '(between files)';

function reportDirectory(): string | undefined {
  const run = process.env[TEST_RUN_VARIABLE];
  return run ? path.join(os.tmpdir(), `pgw-worker-exit-${run}`) : undefined;
}

/** Called by the test environment when a file starts; installs the watch on the first call. */
export function watchWorkerExit(testFile: string): void {
  currentFile = path.relative(process.cwd(), testFile);
  const holder = process as unknown as Record<symbol, boolean>;
  const directory = reportDirectory();
  if (holder[INSTALLED] || !directory || !process.send) return;
  holder[INSTALLED] = true;

  const live = new Map<number, Live>();
  createHook({
    init(id, type, _trigger, resource) {
      if (!IGNORED.has(type)) live.set(id, { type, file: currentFile, resource: new WeakRef(resource as object) });
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();

  // jest-worker's child removes its 'message' listener when told to end, then waits to exit.
  const removeListener = process.removeListener.bind(process);
  process.removeListener = ((event: string, listener: (...args: unknown[]) => void) => {
    if (event === 'message') {
      // Also note how long the exit itself took (Node ends worker threads and runs 'exit'
      // listeners after the loop empties): a worker killed with no report was slow there.
      const asked = Date.now();
      const stages = path.join(directory, `${process.pid}.stages`);
      const note = (stage: string) => {
        fs.mkdirSync(directory, { recursive: true });
        fs.appendFileSync(stages, `${stage} ${Date.now() - asked} ms after Jest asked it to stop\n`);
      };
      process.once('beforeExit', () => note('beforeExit'));
      process.once('exit', () => note('exit'));
      setTimeout(() => {
        const holding = [...live.values()].filter(({ resource: weak }) => {
          const resource = weak.deref();
          try {
            return typeof resource?.hasRef === 'function' ? resource.hasRef() : false;
          } catch {
            return false;
          }
        });
        const lines = [
          `worker ${process.pid}: still running 300 ms after Jest told it to stop`,
          `  active resources: ${JSON.stringify(process.getActiveResourcesInfo())}`,
          ...holding.map(({ type, file }) => `  ${type}, created while ${file} ran`),
        ];
        // Held by something a file made: a leak, which fails the run. Nothing of ours holding
        // it (a loaded machine, an exit under way): reported, not failed.
        fs.mkdirSync(directory, { recursive: true });
        fs.writeFileSync(path.join(directory, `${process.pid}.${holding.length > 0 ? 'held' : 'slow'}`), `${lines.join('\n')}\n`);
      }, 300).unref();
    }
    return removeListener(event, listener);
  }) as typeof process.removeListener;
}

/**
 * Prints (and removes) the reports of workers that did not exit on their own; returns how many
 * were held by something a test file made (the global teardown fails the run for those).
 */
export function reportWorkersThatDidNotExit(): number {
  const directory = reportDirectory();
  if (!directory || !fs.existsSync(directory)) return 0;
  const names = fs.readdirSync(directory);
  const read = (name: string) => fs.readFileSync(path.join(directory, name), 'utf8');
  const held = names.filter((name) => name.endsWith('.held')).map(read);
  const reports = [...held, ...names.filter((name) => name.endsWith('.slow')).map(read)];
  // A worker Jest killed although nothing held its loop: say how far its exit had come.
  for (const name of names.filter((n) => n.endsWith('.stages'))) {
    const stages = read(name);
    const exitMs = Number(/^exit (\d+) ms/m.exec(stages)?.[1] ?? NaN);
    if (!(exitMs < 300)) reports.push(`worker ${name.replace('.stages', '')}: slow to exit\n${stages.replace(/^/gm, '  ')}`);
  }
  fs.rmSync(directory, { recursive: true, force: true });
  if (reports.length > 0) process.stderr.write(`\n[test teardown] ${reports.length} Jest worker(s) did not exit on their own:\n${reports.join('')}`);
  return held.length;
}
