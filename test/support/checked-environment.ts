import { TestEnvironment } from 'jest-environment-node';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { describeOpenHandles, trackOpenHandles, type OpenHandleTracker } from './open-handles';
import { watchWorkerExit } from './worker-exit';

/**
 * Jest's Node environment, plus a check when a test file ends (after its last `afterAll`): a
 * timer, socket, server, child process or worker thread the file opened and left open fails the
 * file, naming where each was created (`test/support/open-handles.ts`). The worker as a whole is
 * watched too: what still holds it when Jest tells it to stop is reported (`worker-exit.ts`).
 */
export default class CheckedEnvironment extends TestEnvironment {
  private tracker: OpenHandleTracker | undefined;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    watchWorkerExit(context.testPath);
  }

  override async setup(): Promise<void> {
    await super.setup();
    this.tracker = trackOpenHandles();
  }

  override async teardown(): Promise<void> {
    const left = (await this.tracker?.check()) ?? [];
    this.tracker?.stop();
    await super.teardown();
    if (left.length > 0) throw new Error(describeOpenHandles(left));
  }
}
