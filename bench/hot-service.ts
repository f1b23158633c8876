import 'reflect-metadata';
import { Session } from 'node:inspector';
import { loadConfig } from '../src/config';
import { createService, type Service } from '../src/bootstrap';

/**
 * The service under test, in a process of its own (so its RSS and CPU time are its own), driven
 * by the bench over IPC: `start` (with the environment), `stats` (CPU time, RSS, heap),
 * `alloc-start` / `alloc-stop` (bytes allocated on the JS heap meanwhile, from V8's sampling
 * heap profiler counting objects already collected too), `profile-start` / `profile-stop` (a
 * CPU profile of the main thread meanwhile), `exit`.
 */
let service: Service | undefined;
const session = new Session();
session.connect();
const post = <T>(method: string, params?: object) =>
  new Promise<T>((resolve, reject) => session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))));

interface ProfileNode {
  selfSize: number;
  children: ProfileNode[];
}

function total(node: ProfileNode): number {
  let sum = node.selfSize;
  for (const child of node.children) sum += total(child);
  return sum;
}

async function handle(msg: { cmd: string; env?: Record<string, string> }): Promise<unknown> {
  switch (msg.cmd) {
    case 'start': {
      const config = loadConfig(msg.env!);
      service = await createService(config, { logger: false });
      await service.app.listen({ port: config.port, host: '127.0.0.1' });
      return { ok: true };
    }
    case 'stats': {
      const cpu = process.cpuUsage();
      const m = process.memoryUsage();
      return { cpuUs: cpu.user + cpu.system, rss: m.rss, heapUsed: m.heapUsed };
    }
    case 'alloc-start':
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      return { ok: true };
    case 'alloc-stop': {
      const { profile } = await post<{ profile: { head: ProfileNode } }>('HeapProfiler.stopSampling');
      await post('HeapProfiler.disable');
      return { bytes: total(profile.head) };
    }
    case 'profile-start':
      await post('Profiler.enable');
      await post('Profiler.start');
      return { ok: true };
    case 'profile-stop': {
      const { profile } = await post<{ profile: unknown }>('Profiler.stop');
      await post('Profiler.disable');
      return { profile };
    }
    case 'exit':
      await service?.close();
      process.exit(0);
  }
  throw new Error(`unknown command ${msg.cmd}`);
}

process.on('message', (msg: { cmd: string; env?: Record<string, string> }) => {
  handle(msg).then(
    (result) => process.send!(result),
    (err) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
});
