/**
 * The listeners of one kind of news (metrics, caches, tests): `add` returns the remover, `emit`
 * tells each in turn. A listener that throws is skipped: its fault is never the emitter's (a
 * payment, a delivery, a connection).
 */
export class Listeners<T> {
  private readonly listeners = new Set<(value: T) => void>();

  add(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(value: T): void {
    for (const listener of this.listeners) {
      try {
        listener(value);
      } catch {
        // Skipped; the others are still told.
      }
    }
  }
}
