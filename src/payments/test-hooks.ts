/**
 * Fault injection for the crash-recovery test, and nothing else: honoured only when
 * NODE_ENV is `test`, so a production process ignores the variable entirely.
 *
 * PGW_TEST_CRASH_AFTER_PROCESSOR_CALL=1 kills the process (SIGKILL, no cleanup) right after
 * the processor has answered an order payment and before the answer is written, which is
 * the window the start-up reconciliation must close.
 */
export function crashAfterProcessorCallRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODE_ENV === 'test' && env.PGW_TEST_CRASH_AFTER_PROCESSOR_CALL === '1';
}

export function crashNow(): never {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL cannot be caught; this line is never reached.
  throw new Error('unreachable');
}
