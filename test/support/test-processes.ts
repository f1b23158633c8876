import fs from 'node:fs';

/**
 * Every process a test run starts carries `PGW_TEST_RUN=<the run's id>` in its environment: the
 * global setup puts it in process.env (Jest's workers, and whatever they spawn with the default
 * environment, inherit it), and a test that spawns with an environment of its own adds
 * `...processMarker()`. At the end of the run the global teardown looks for live processes
 * still carrying it and fails the run, naming them.
 */
export const TEST_RUN_VARIABLE = 'PGW_TEST_RUN';

/** The marker to spread into a spawned process's explicit environment. */
export function processMarker(): Record<string, string> {
  const id = process.env[TEST_RUN_VARIABLE];
  return id ? { [TEST_RUN_VARIABLE]: id } : {};
}

export interface MarkedProcess {
  pid: number;
  command: string;
}

/**
 * Live processes whose environment carries `PGW_TEST_RUN=runId`, read from /proc (Linux; an
 * empty list elsewhere). `exclude` filters out the run's own processes (Jest and its workers).
 */
export function findMarkedProcesses(runId: string, exclude: (pid: number) => boolean = () => false): MarkedProcess[] {
  if (!fs.existsSync('/proc/self/environ')) return [];
  const wanted = `${TEST_RUN_VARIABLE}=${runId}`;
  const found: MarkedProcess[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid || exclude(pid)) continue;
    let environ: string;
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue; // gone meanwhile, or another user's
    }
    if (!environ.split('\0').includes(wanted)) continue;
    // A zombie has exited already; only its parent's wait is missing.
    if (procStat(pid)?.state === 'Z') continue;
    found.push({ pid, command: commandLine(pid) });
  }
  return found;
}

/** Jest's own worker processes: children of this process running jest-worker. */
export function isJestWorker(pid: number): boolean {
  return procStat(pid)?.ppid === process.pid && /jest-worker/.test(commandLine(pid));
}

/** Fails (naming each process) when a process of this run is still alive; kills them first. */
export function assertNoProcessLeft(runId: string, exclude: (pid: number) => boolean = isJestWorker): void {
  const left = findMarkedProcesses(runId, exclude);
  if (left.length === 0) return;
  for (const { pid } of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  throw new Error(
    `${left.length} process(es) started by this test run were still running at its end (now killed); ` +
      `a test must stop what it starts, also when it fails:\n` +
      left.map((p) => `  pid ${p.pid}: ${p.command}`).join('\n'),
  );
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 300);
  } catch {
    return '?';
  }
}

function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}
