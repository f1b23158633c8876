/**
 * Work started in the background that a shutdown must wait for (an announcement on its way to
 * the other instances). A failure is the work's own to report: here it only ends the wait.
 */
export class Pending<T> {
  private readonly running = new Set<Promise<void>>();
  private results: Array<T | undefined> = [];

  add(work: Promise<T>): void {
    const tracked: Promise<void> = work
      .then(
        (result) => void this.results.push(result),
        () => void this.results.push(undefined),
      )
      .finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /**
   * Resolves once nothing added so far, nor added meanwhile, is running, with what each work
   * added since the last call resolved to (undefined for one that failed).
   */
  async settled(): Promise<Array<T | undefined>> {
    while (this.running.size > 0) await Promise.all([...this.running]);
    const results = this.results;
    this.results = [];
    return results;
  }
}
