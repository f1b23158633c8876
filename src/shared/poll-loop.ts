/** The longest a loop waits after failed rounds, however many failed in a row. */
const MAX_BACKOFF_MS = 30_000;
/** The shortest idle sleep: a due time already past does not spin the loop. */
const MIN_IDLE_MS = 5;

export interface PollLoopOptions {
  /**
   * One round of work. Answers true when more may be due at once (the loop goes round again
   * without sleeping), false when the loop may sleep. A throw is a failed round: reported to
   * `fault`, then the loop backs off.
   */
  round(): Promise<boolean>;
  /** How long to sleep after a round that left nothing due now (asked after the round; at least 5 ms). */
  idleMs(): number;
  /** The backoff after n failed rounds in a row is this times 2^n (n at most 5), at most 30 s. */
  backoffBaseMs: number;
  fault(err: unknown): void;
}

/**
 * A background loop of rounds: one round after another while there is work, a sleep between
 * them when there is none, an exponential backoff after failures. wake() ends the sleep at once
 * (or, during a round, makes the loop go round again without sleeping); stop() ends the loop
 * after the round in progress. The sleep's timer does not keep the process alive.
 */
export class PollLoop {
  private running = false;
  private loop?: Promise<void>;
  private woken = false;
  private wakeSleeper?: () => void;

  constructor(private readonly options: PollLoopOptions) {}

  /** True from start() until stop(). */
  get started(): boolean {
    return this.running;
  }

  /** Starts the loop (no-op when started). */
  start(): void {
    if (this.loop) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops the loop and resolves once the round in progress (if any) has ended. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    this.loop = undefined;
  }

  /** Something may be due now. */
  wake(): void {
    this.woken = true;
    this.wakeSleeper?.();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.woken = false;
      let again = false;
      try {
        again = await this.options.round();
        failures = 0;
      } catch (err) {
        failures += 1;
        this.options.fault(err);
      }
      if (!this.running) break;
      if (failures === 0 && (this.woken || again)) continue;
      await this.sleep(
        failures > 0 ? Math.min(this.options.backoffBaseMs * 2 ** Math.min(failures, 5), MAX_BACKOFF_MS) : Math.max(MIN_IDLE_MS, this.options.idleMs()),
      );
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wakeSleeper === done) this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wakeSleeper = done;
      if (this.woken || !this.running) done();
    });
  }
}
