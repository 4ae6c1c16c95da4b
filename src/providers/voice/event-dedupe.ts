/**
 * Remembers the last `capacity` server event ids. After a resume the provider may replay events the adapter already
 * delivered; each id is delivered at most once while it is remembered. A ring plus a Set keeps memory bounded.
 *
 * 256 ids cover far more than a resume replays (the provider replays its recent events: the simulator 16; a 15 s
 * reconnect window at a busy call's ~5 events a second is ~75). The ring grows as ids arrive instead of being
 * allocated whole: a call's memory is what it has seen, at most ~20 KB (native-bench: heap per session).
 */
export class EventDedupe {
  private readonly ring: string[] = [];
  private readonly seen = new Set<string>();
  private next = 0;

  constructor(private readonly capacity = 256) {}

  /** True the first time an id is offered; false for a repeat. */
  firstSeen(id: string): boolean {
    if (this.seen.has(id)) return false;
    if (this.ring.length < this.capacity) {
      this.ring.push(id);
    } else {
      this.seen.delete(this.ring[this.next]!);
      this.ring[this.next] = id;
      this.next = (this.next + 1) % this.capacity;
    }
    this.seen.add(id);
    return true;
  }
}
