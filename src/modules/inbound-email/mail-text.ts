// Cuts what a reply quotes and its signature, so an incident gets what the person wrote.

/** Lines that start the quoted original in common mail clients. */
const QUOTE_HEADERS = [
  /^On .{1,300} wrote:\s*$/i, // Gmail, Apple Mail, Thunderbird
  /^Le .{1,300} a écrit\s?:\s*$/i,
  /^Am .{1,300} schrieb .{0,200}:\s*$/i,
  /^-{2,}\s*Original Message\s*-{2,}$/i, // Outlook
  /^_{5,}$/, // Outlook's rule before From:/Sent:
  /^From: .+$/, // a forwarded or quoted header block
];
/** The signature delimiter ("-- ", RFC 3676) and common phone footers. */
const SIGNATURE = [/^-- ?$/, /^Sent from my /i, /^Get Outlook for /i];

export function stripReply(text: string): string {
  const kept: string[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    // A quote header may wrap onto two lines ("On Mon, ... <a@b>\nwrote:").
    const joined = i + 1 < lines.length ? `${line} ${lines[i + 1]!.trim()}` : line;
    if (QUOTE_HEADERS.some((re) => re.test(line.trim()) || re.test(joined.trim())) || SIGNATURE.some((re) => re.test(line))) break;
    if (line.startsWith('>')) continue;
    kept.push(line);
  }
  return kept.join('\n').trim();
}
