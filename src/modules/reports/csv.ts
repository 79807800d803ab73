// RFC 4180: fields separated by commas, records by CRLF, a field quoted when it holds a comma, a
// quote or a line break (quotes doubled). A field that a spreadsheet would run as a formula
// (starting with =, +, - or @ and not a number) is prefixed with a quote mark (OWASP's CSV injection advice).
const FORMULA = /^[=+\-@\t\r]/;

function field(v: string | number | null): string {
  if (v === null) return '';
  let s = typeof v === 'number' ? String(v) : v;
  if (typeof v === 'string' && FORMULA.test(s) && Number.isNaN(Number(s))) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  return [header, ...rows].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
}
