import { Pending } from '../../../src/shared/pending';

describe('Pending background work', () => {
  it('waits for the work added, also while it waits, and counts what did not do all it set out to', async () => {
    const pending = new Pending();
    pending.add(Promise.resolve(true));
    pending.add(Promise.resolve(false));
    pending.add(Promise.reject(new Error('connection reset')));
    pending.add(
      new Promise<boolean>((resolve) => {
        // Work added while settled() waits is waited for too.
        setTimeout(() => pending.add(new Promise((later) => setTimeout(() => later(false), 20))), 10);
        setTimeout(() => resolve(true), 30);
      }),
    );
    expect(await pending.settled()).toBe(3);
    // Counted once: the next answer starts from nothing.
    expect(await pending.settled()).toBe(0);
  });
});
