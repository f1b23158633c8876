/**
 * Work started in the background that a shutdown must wait for (an announcement on its way to
 * the other instances). A failure is the work's own to report: here it only ends the wait.
 */
export class Pending {
  private readonly running = new Set<Promise<void>>();

  add(work: Promise<unknown>): void {
    const tracked: Promise<void> = work
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Resolves once nothing added so far, nor added meanwhile, is running. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
