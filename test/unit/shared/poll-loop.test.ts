import { PollLoop, type PollLoopOptions } from '../../../src/shared/poll-loop';

const HOUR = 3_600_000;

/** A loop whose rounds the test hands out one by one: each round waits until the test answers it. */
function steppedLoop(options: Partial<PollLoopOptions> = {}) {
  const waiting: Array<{ answer(again: boolean | Error): void }> = [];
  let arrived: (() => void) | undefined;
  let rounds = 0;
  const faults: unknown[] = [];
  const loop = new PollLoop({
    round: () =>
      new Promise<boolean>((resolve, reject) => {
        rounds += 1;
        waiting.push({ answer: (again) => (again instanceof Error ? reject(again) : resolve(again)) });
        arrived?.();
      }),
    idleMs: () => HOUR,
    backoffBaseMs: HOUR,
    fault: (err) => faults.push(err),
    ...options,
  });
  /** The next round, once the loop has begun it. */
  const nextRound = async () => {
    if (waiting.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
    arrived = undefined;
    return waiting.shift()!;
  };
  return { loop, nextRound, rounds: () => rounds, faults };
}

describe('PollLoop', () => {
  it('stop() resolves only once the round in progress has ended, and no round begins after it', async () => {
    const { loop, nextRound, rounds } = steppedLoop();
    loop.start();
    const round = await nextRound();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    expect(loop.started).toBe(false);
    round.answer(true);
    await stopping;
    expect(rounds()).toBe(1);
  });

  it('a round that answers true is followed by another at once, without the idle sleep', async () => {
    const { loop, nextRound } = steppedLoop();
    loop.start();
    (await nextRound()).answer(true);
    // The idle sleep is an hour: a second round now means none was slept.
    const second = await nextRound();
    const stopping = loop.stop();
    second.answer(false);
    await stopping;
  });

  it('wake() ends the idle sleep: the next round begins at once', async () => {
    const { loop, nextRound, rounds } = steppedLoop();
    loop.start();
    (await nextRound()).answer(false);
    // Let the loop reach its hour-long sleep, then wake it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(rounds()).toBe(1);
    loop.wake();
    const second = await nextRound();
    const stopping = loop.stop();
    second.answer(false);
    await stopping;
  });

  it('wake() during a round makes the loop go round again instead of sleeping', async () => {
    const { loop, nextRound } = steppedLoop();
    loop.start();
    const first = await nextRound();
    loop.wake();
    first.answer(false);
    const second = await nextRound();
    const stopping = loop.stop();
    second.answer(false);
    await stopping;
  });

  it('a failed round is reported to fault, and the loop goes on after its backoff', async () => {
    const { loop, nextRound, faults } = steppedLoop({ backoffBaseMs: 1 });
    loop.start();
    const failure = new Error('database away');
    (await nextRound()).answer(failure);
    // The backoff after one failure is 2 ms here: the loop goes on by itself.
    const second = await nextRound();
    expect(faults).toEqual([failure]);
    const stopping = loop.stop();
    second.answer(false);
    await stopping;
  });

  it('start() twice runs one loop, and a stopped loop can be started again', async () => {
    const { loop, nextRound, rounds } = steppedLoop();
    loop.start();
    loop.start();
    const first = await nextRound();
    await new Promise((resolve) => setImmediate(resolve));
    expect(rounds()).toBe(1);
    const stopping = loop.stop();
    first.answer(false);
    await stopping;
    loop.start();
    expect(loop.started).toBe(true);
    const again = await nextRound();
    const stoppingAgain = loop.stop();
    again.answer(false);
    await stoppingAgain;
    expect(rounds()).toBe(2);
  });
});
