/** A tiny typed event emitter (no Node built-ins, so it runs in browsers). A throwing listener does not stop the others. */
export class Emitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): () => void {
    let set = this.listeners.get(event);
    if (set === undefined) this.listeners.set(event, (set = new Set()));
    set.add(listener as (payload: never) => void);
    return () => this.off(event, listener);
  }

  off<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): void {
    this.listeners.get(event)?.delete(listener as (payload: never) => void);
  }

  protected emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.listeners.get(event);
    if (set === undefined) return;
    for (const listener of set) {
      try {
        (listener as (payload: Events[K]) => void)(payload);
      } catch (err) {
        // A listener's bug must not break the call's protocol handling; surface it asynchronously.
        setTimeout(() => {
          throw err;
        }, 0);
      }
    }
  }

  protected listenerCount(event: keyof Events): number {
    return this.listeners.get(event)?.size ?? 0;
  }
}
