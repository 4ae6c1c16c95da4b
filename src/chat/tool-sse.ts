import type { ToolProgress } from './tool-loop.js';

type SseItem = { event: 'token'; data: { text: string } } | { event: 'tool'; data: ToolProgress };

/**
 * Places SSE `tool` events where they happened in the answer's text: each is noted at the count of text characters
 * pushed before it, and the writer's text pieces are cut there. (The text queue carries only text; a tool event pushes
 * an empty piece to wake the writer.)
 */
export class ToolEventTrack {
  private events: Array<{ at: number; progress: ToolProgress }> = [];
  private pushed = 0;
  private written = 0;

  noteText(text: string): void {
    this.pushed += text.length;
  }

  add(progress: ToolProgress): void {
    this.events.push({ at: this.pushed, progress });
  }

  /** The events to write for the next text piece: its text, cut around the tool events that fall inside it. */
  interleave(text: string): SseItem[] {
    const out: SseItem[] = [];
    let rest = text;
    while (this.events.length > 0 && this.events[0]!.at <= this.written + rest.length) {
      const { at, progress } = this.events.shift()!;
      const cut = Math.max(0, at - this.written);
      if (cut > 0) {
        out.push({ event: 'token', data: { text: rest.slice(0, cut) } });
        this.written += cut;
        rest = rest.slice(cut);
      }
      out.push({ event: 'tool', data: progress });
    }
    if (rest.length > 0) {
      out.push({ event: 'token', data: { text: rest } });
      this.written += rest.length;
    }
    return out;
  }

  /** Tool events after the last text. */
  rest(): SseItem[] {
    return this.events.splice(0).map(({ progress }) => ({ event: 'tool' as const, data: progress }));
  }
}
