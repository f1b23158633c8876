/**
 * Work started in the background that a shutdown must wait for (an announcement on its way to
 * the other instances), each resolving true when it did all it set out to do. A failure is the
 * work's own to report: here it only ends the wait and is counted.
 */
export class Pending {
  private readonly running = new Set<Promise<void>>();
  /** Work that resolved false or failed since `settled` last answered (a count: nothing is kept per work). */
  private unconfirmed = 0;

  add(work: Promise<boolean>): void {
    const tracked: Promise<void> = work
      .then(
        (done) => {
          if (!done) this.unconfirmed += 1;
        },
        () => {
          this.unconfirmed += 1;
        },
      )
      .finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Resolves once nothing added so far, nor added meanwhile, is running, with how many of them did not do all they set out to. */
  async settled(): Promise<number> {
    while (this.running.size > 0) await Promise.all([...this.running]);
    const unconfirmed = this.unconfirmed;
    this.unconfirmed = 0;
    return unconfirmed;
  }
}
