import { deflateSync } from 'node:zlib';
import type { Sql } from '../../src/db/index.js';

/** A small but real PDF (one page, Helvetica, a FlateDecode content stream) drawing the given lines. */
export function makePdf(lines: string[]): Buffer {
  const escape = (s: string) => s.replace(/\\/g, '\\\\').replace(/\(/g, '\\(').replace(/\)/g, '\\)');
  const ops = [
    'BT',
    '/F1 12 Tf',
    '72 720 Td',
    ...lines.flatMap((line, i) => [...(i > 0 ? ['0 -16 Td'] : []), `(${escape(line)}) Tj`]),
    'ET',
  ].join('\n');
  const content = deflateSync(Buffer.from(ops, 'latin1'));
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let size = 0;
  const add = (chunk: Buffer | string) => {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    parts.push(b);
    size += b.length;
  };
  const obj = (n: number, body: string) => {
    offsets[n] = size;
    add(`${n} 0 obj\n${body}\nendobj\n`);
  };
  add('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n');
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  obj(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  obj(
    3,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
  );
  offsets[4] = size;
  add(`4 0 obj\n<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n`);
  add(content);
  add('\nendstream\nendobj\n');
  obj(5, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const xref = size;
  add(
    `xref\n0 6\n0000000000 65535 f \n${[1, 2, 3, 4, 5].map((n) => `${String(offsets[n]).padStart(10, '0')} 00000 n \n`).join('')}`,
  );
  add(`trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/** A PDF with only an image-like stream: nothing to extract. */
export function makeTextlessPdf(): Buffer {
  return Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1');
}

export const HANDBOOK_MD = `# Store handbook

Welcome to the Parley test shop. This handbook covers policies.

## Refunds

Customers can request a refund within 30 days of delivery. Refunds are paid back to the original card within five business days.

## Gift wrapping

Gift wrapping costs four euros per parcel and includes a handwritten card.
`;

/** Polls until the document reaches one of the statuses (the ingestion worker runs in the app). */
export async function waitForDocument(
  fetchDocument: () => Promise<{ status: string; error: string | null }>,
  statuses: string[] = ['ready', 'failed'],
  timeoutMs = 20_000,
): Promise<{ status: string; error: string | null }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const doc = await fetchDocument();
    if (statuses.includes(doc.status)) return doc;
    if (Date.now() > deadline)
      throw new Error(`document still ${doc.status} after ${timeoutMs} ms (error: ${doc.error})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function chunkCount(sql: Sql, documentId: string): Promise<number> {
  const [row] = await sql<
    Array<{ n: number }>
  >`select count(*) as n from document_chunks where document_id = ${documentId}`;
  return row!.n;
}
