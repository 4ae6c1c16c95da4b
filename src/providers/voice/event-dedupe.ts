/**
 * Remembers the last `capacity` server event ids. After a resume the provider may replay events the adapter already
 * delivered; each id is delivered at most once while it is remembered. A ring plus a Set keeps memory bounded.
 */
export class EventDedupe {
  private readonly ring: (string | undefined)[];
  private readonly seen = new Set<string>();
  private next = 0;

  constructor(private readonly capacity = 2048) {
    this.ring = new Array<string | undefined>(capacity);
  }

  /** True the first time an id is offered; false for a repeat. */
  firstSeen(id: string): boolean {
    if (this.seen.has(id)) return false;
    const evicted = this.ring[this.next];
    if (evicted !== undefined) this.seen.delete(evicted);
    this.ring[this.next] = id;
    this.next = (this.next + 1) % this.capacity;
    this.seen.add(id);
    return true;
  }
}
