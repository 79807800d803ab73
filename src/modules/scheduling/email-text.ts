// The text of the emails to a booking's attendee, per language (issue 20): the server-side
// counterpart of web/src/lib/i18n.ts. German when the booking's language is German (`de`, `de-AT`,
// ...), English otherwise. English is complete and the fallback for any key a language lacks.
// Dates are not here: `whenIn` formats them with Intl in the booking's language and time zone.
// The calendar invitation (.ics) and the host's emails stay in English.

const en = {
  'name.fallback': 'Booking',
  'host.by': 'the host',
  'host.with': 'your host',
  'host.subject': 'The host',
  'created.pending.subject': 'Request received: {name} on {at}',
  'created.pending.text': 'Your request for {name} on {at} waits for {host} to confirm it.',
  'created.subject': 'Confirmed: {name} on {at}',
  'created.text': 'Your booking of {name} with {host} on {at} is confirmed.',
  'confirmed.subject': 'Confirmed: {name} on {at}',
  'confirmed.text': '{host} confirmed {name} on {at}.',
  'declined.subject': 'Declined: {name} on {at}',
  'declined.text': '{host} could not accept {name} on {at}.',
  'cancelled.subject': 'Cancelled: {name} on {at}',
  'cancelled.text': '{name} on {at} is cancelled.',
  'rescheduled.subject': 'Rescheduled: {name}, now {at}',
  'rescheduled.text': '{name} now takes place on {at}.',
  reason: 'Reason: {reason}',
  where: 'Where: {place}',
  manage: 'Need to change it?\nReschedule: {reschedule}\nCancel: {cancel}',
} as const;

export type EmailKey = keyof typeof en;

const de: Partial<Record<EmailKey, string>> = {
  'name.fallback': 'Termin',
  'host.by': 'den Gastgeber',
  'host.with': 'Ihrem Gastgeber',
  'host.subject': 'Der Gastgeber',
  'created.pending.subject': 'Anfrage erhalten: {name} am {at}',
  'created.pending.text': 'Ihre Anfrage für {name} am {at} wartet auf die Bestätigung durch {host}.',
  'created.subject': 'Bestätigt: {name} am {at}',
  'created.text': 'Ihre Buchung von {name} mit {host} am {at} ist bestätigt.',
  'confirmed.subject': 'Bestätigt: {name} am {at}',
  'confirmed.text': '{host} hat {name} am {at} bestätigt.',
  'declined.subject': 'Abgelehnt: {name} am {at}',
  'declined.text': '{host} kann {name} am {at} leider nicht annehmen.',
  'cancelled.subject': 'Abgesagt: {name} am {at}',
  'cancelled.text': '{name} am {at} ist abgesagt.',
  'rescheduled.subject': 'Verschoben: {name}, jetzt am {at}',
  'rescheduled.text': '{name} findet jetzt am {at} statt.',
  reason: 'Grund: {reason}',
  where: 'Ort: {place}',
  manage: 'Möchten Sie etwas ändern?\nVerschieben: {reschedule}\nAbsagen: {cancel}',
};

const TEXTS: Record<string, Partial<Record<EmailKey, string>>> = { en, de };

/** The language of the text for a stored BCP 47 tag: `de` for any German tag, else `en`. */
export function textLanguage(tag: string | null | undefined): 'en' | 'de' {
  return tag?.toLowerCase().split('-')[0] === 'de' ? 'de' : 'en';
}

/** A text of the table in `tag`'s language with `{name}` placeholders filled in (values are never re-read as placeholders). */
export function emailText(tag: string | null | undefined, key: EmailKey, vars: Record<string, string> = {}): string {
  const text = TEXTS[textLanguage(tag)]?.[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? `{${k}}`);
}
