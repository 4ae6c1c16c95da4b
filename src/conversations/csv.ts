/**
 * CSV (RFC 4180): fields quoted when they hold a comma, quote or line break, CRLF line ends. A cell that a
 * spreadsheet would run as a formula (starting with = + - @, tab or CR) is prefixed with ' (OWASP, CSV injection):
 * first messages are written by visitors.
 */
export function toCsv(header: string[], rows: Array<Array<string | number | null>>): string {
  const cell = (value: string | number | null): string => {
    if (value === null) return '';
    let text = String(value);
    if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}
