/**
 * A small multipart/form-data reader for dashboard uploads (RFC 7578): the whole body is already in
 * memory (bounded by the route's body limit), so this only splits it. Returns the parts in order.
 */
export interface FormPart {
  name: string | undefined;
  filename: string | undefined;
  contentType: string | undefined;
  data: Buffer;
}

export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data/i.test(contentType)) return undefined;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

function headerParam(header: string, name: string): string | undefined {
  const star = new RegExp(`${name}\\*=(?:UTF-8|utf-8)''([^;]+)`).exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[1]!);
    } catch {
      /* fall through to the plain form */
    }
  }
  const m = new RegExp(`(?:^|;)\\s*${name}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, 'i').exec(header);
  return m ? (m[1] ?? m[2]?.trim())?.replace(/\\(.)/g, '$1') : undefined;
}

export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let pos = body.indexOf(delimiter);
  while (pos >= 0) {
    let start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break; // closing delimiter
    if (body.subarray(start, start + 2).toString() === '\r\n') start += 2;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start, next - 2 >= start ? next - 2 : next); // drop the CRLF before the delimiter
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const headers: Record<string, string> = {};
      for (const line of part.subarray(0, headerEnd).toString('utf8').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const disposition = headers['content-disposition'] ?? '';
      parts.push({
        name: headerParam(disposition, 'name'),
        filename: headerParam(disposition, 'filename'),
        contentType: headers['content-type'],
        data: part.subarray(headerEnd + 4),
      });
    }
    pos = next;
  }
  return parts;
}
