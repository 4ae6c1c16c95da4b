/**
 * A one-consumer queue of text pieces between the provider loop (push) and the SSE writer (iterate). The writer
 * waits for the socket to drain, so pieces may pile up here; the answer is bounded by the output-token ceiling.
 */
export class TextQueue implements AsyncIterable<string> {
  private items: string[] = [];
  private closed = false;
  private waiter: (() => void) | undefined;
  private firstWaiters: Array<(got: boolean) => void> = [];
  private pushedAny = false;

  push(text: string): void {
    this.items.push(text);
    if (!this.pushedAny) {
      this.pushedAny = true;
      for (const w of this.firstWaiters.splice(0)) w(true);
    }
    this.waiter?.();
  }

  close(): void {
    this.closed = true;
    for (const w of this.firstWaiters.splice(0)) w(this.pushedAny);
    this.waiter?.();
  }

  /** Resolves true once the first piece arrived, false if the queue closed empty. */
  first(): Promise<boolean> {
    if (this.pushedAny || this.closed) return Promise.resolve(this.pushedAny);
    return new Promise((resolve) => this.firstWaiters.push(resolve));
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    for (;;) {
      if (this.items.length > 0) {
        // Coalesce what piled up while the socket drained: fewer, larger events.
        yield this.items.splice(0).join('');
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.waiter = resolve));
      this.waiter = undefined;
    }
  }
}
