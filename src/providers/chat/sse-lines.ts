/**
 * Incremental Server-Sent Events reader for upstream streams: feed text chunks, get the `data` of every
 * complete event (multi-line data joined with "\n"). Comments and other fields are ignored.
 */
export class SseDataReader {
  private buffer = '';
  private data: string[] = [];

  push(chunk: string): string[] {
    this.buffer += chunk;
    const out: string[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = this.buffer.slice(0, newline);
      const sepLength = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      this.buffer = this.buffer.slice(newline + sepLength);
      if (line === '') {
        if (this.data.length > 0) out.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
    }
    return out;
  }

  /** Whatever complete-but-unterminated event is left at the end of the stream. */
  flush(): string[] {
    const rest = this.push('\n\n');
    return rest;
  }
}
