import { createHook } from 'node:async_hooks';

/**
 * What a test file left running. Jest runs many files one after another in each worker process,
 * and a worker can only exit when nothing keeps its event loop alive: a timer still pending, a
 * socket or server still open, a child process or worker thread not ended. One such thing left by
 * any file makes Jest kill the worker at the end of the run ("A worker process has failed to exit
 * gracefully"), long after the file that left it, which nothing then names.
 *
 * `trackOpenHandles()` records, from the moment it is called, every such resource the process
 * creates, with the stack that created it, and forgets it once it is closed, fired or cleared.
 * `check()` waits a short while for what is being closed to finish closing, then lists what is
 * still open and still holds the process (an `unref()`ed timer or socket does not).
 */

/** The kinds of resource that keep a Node process alive (async_hooks' names). */
const HOLDING_TYPES = new Set([
  'Timeout',
  'TCPWRAP',
  'TCPSERVERWRAP',
  'PIPEWRAP',
  'PIPESERVERWRAP',
  'PROCESSWRAP',
  'UDPWRAP',
  'WORKER',
  'FSEVENTWRAP',
  'SIGNALWRAP',
  'TTYWRAP',
]);

interface Tracked {
  type: string;
  resource: {
    hasRef?: () => boolean;
    fd?: number;
    _onTimeout?: unknown;
    _idleTimeout?: number;
    getsockname?: (out: Record<string, unknown>) => number;
    getpeername?: (out: Record<string, unknown>) => number;
    pid?: number;
  };
  stack: string;
}

export interface OpenHandle {
  type: string;
  /** What it is: a timer's delay and callback, a socket's addresses, a process's pid. */
  detail: string;
  /** Where it was created: the first frames outside Node's internals and this file. */
  createdAt: string;
}

export interface OpenHandleTracker {
  /** What is still open and holding the process, after waiting up to `graceMs` for it to close. */
  check(graceMs?: number): Promise<OpenHandle[]>;
  stop(): void;
}

export function trackOpenHandles(): OpenHandleTracker {
  const live = new Map<number, Tracked>();
  const hook = createHook({
    init(asyncId, type, _trigger, resource) {
      if (!HOLDING_TYPES.has(type)) return;
      const holder: { stack?: string } = {};
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 30;
      Error.captureStackTrace(holder);
      Error.stackTraceLimit = limit;
      live.set(asyncId, { type, resource: resource as Tracked['resource'], stack: holder.stack ?? '' });
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  });
  hook.enable();

  const holding = (): OpenHandle[] =>
    [...live.values()]
      .filter(({ resource }) => isHolding(resource))
      .map(({ type, resource, stack }) => ({ type, detail: detail(type, resource), createdAt: createdAt(stack) }));

  return {
    async check(graceMs = 1000) {
      // A socket or server being closed, a timer about to fire: their `destroy` comes a few
      // ticks later. Wait for the list to empty, bounded by the grace period.
      const deadline = Date.now() + graceMs;
      let left = holding();
      while (left.length > 0 && Date.now() < deadline) {
        await new Promise<void>((resolve) => setTimeout(resolve, 20).unref());
        left = holding();
      }
      return left;
    },
    stop() {
      hook.disable();
      live.clear();
    },
  };
}

/** The message a file that left something open fails with. */
export function describeOpenHandles(handles: OpenHandle[]): string {
  return (
    `${handles.length} handle(s) this test file opened were still open when it ended; they keep Jest's ` +
    `worker alive ("failed to exit gracefully"). Close, clear or unref them in afterAll/finally:\n` +
    handles.map((h) => `  ${h.type} ${h.detail}, created at\n${h.createdAt}`).join('\n')
  );
}

function isHolding(resource: Tracked['resource']): boolean {
  // Standard streams (fd 0-2) belong to the worker, not to a test.
  if (typeof resource.fd === 'number' && resource.fd >= 0 && resource.fd <= 2) return false;
  return typeof resource.hasRef === 'function' ? resource.hasRef() : true;
}

function detail(type: string, resource: Tracked['resource']): string {
  try {
    if (type === 'Timeout') return `(${resource._idleTimeout} ms: ${String(resource._onTimeout).replace(/\s+/g, ' ').slice(0, 120)})`;
    if (type === 'PROCESSWRAP') return `(pid ${resource.pid})`;
    const local: Record<string, unknown> = {};
    const remote: Record<string, unknown> = {};
    resource.getsockname?.(local);
    resource.getpeername?.(remote);
    if (local.port !== undefined) return `(${local.address}:${local.port}${remote.port !== undefined ? ` -> ${remote.address}:${remote.port}` : ''})`;
  } catch {
    // a description is a courtesy
  }
  return '';
}

function createdAt(stack: string): string {
  const all = stack.split('\n').slice(1);
  const own = all.filter((line) => !/node:|open-handles\.ts|node_modules\/jest-/.test(line));
  // Created from a callback of Node's own (a listen after a DNS lookup): no frame of ours.
  const frames = own.length > 0 ? own : ['(asynchronously, from Node internals only)', ...all];
  return frames
    .slice(0, 8)
    .map((line) => `    ${line.trim()}`)
    .join('\n');
}
