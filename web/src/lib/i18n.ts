// The public pages' text in the visitor's language (issue 20): the booking page, the management
// page and "Add to calendar". Each language is one flat table of keys; English is the fallback for
// any key a language lacks, German is complete (typed with every key, so a missing one fails the
// build). The language is the first of the browser's languages with a table (`?lang=` overrides);
// dates and times go through Intl with `locale()`, so they follow the visitor's language even in a
// language without a table. Add a language: copy `en`, translate the values, add it to MESSAGES.
// The emails' counterpart on the server is src/modules/scheduling/email-text.ts.

import { ApiError, messageOf } from './api';

const en = {
  'facts.confirms': 'The host confirms each request',
  'facts.where': 'Where',
  'loc.video': 'Video call',
  'loc.phone': 'Phone call',
  'loc.in_person': 'In person',
  'loc.other': 'Details follow by email',
  'cal.title': 'Add to calendar',
  'cal.ics': 'Download .ics',
  'cal.google': 'Google Calendar',
  'cal.outlook': 'Outlook.com',
  'cal.summary': '{event} with {host}',
  'cal.manage': 'Reschedule or cancel: {url}',
  'picker.choose': 'Choose a day',
  'picker.keys': '{month}: use the arrow keys to move between days',
  'picker.noTimes': 'No open times on this day.',
  'picker.nextOpen': 'Next open day ›',
  'picker.dayNoTimes': '{day}, no open times',
  'picker.dayOut': '{day}, not bookable',
  'picker.prevMonth': 'Previous month',
  'picker.nextMonth': 'Next month',
  'picker.zone': 'Time zone',
  'common.tryAgain': 'Try again',
  'common.loading': 'Loading…',
  'common.wrong': 'Something went wrong',
  'common.network': 'Network error: check your connection and try again.',
  'common.busy': 'Too many requests right now. Please wait a minute and try again.',
  'common.powered': 'Scheduling by Muster',
  'common.optional': '(optional)',
  'duration.min': '{m} min',
  'duration.h': '{h} h',
  'duration.hmin': '{h} h {m} min',
  'book.title': 'Book a time',
  'book.invalidLink': 'This booking link is not valid.',
  'book.notFound': 'Page not found',
  'book.notFoundText': 'This booking page does not exist or is not open for bookings. Check the link you were given.',
  'book.pick': 'Pick a day and time',
  'book.taken': 'Sorry, that time was just taken. Here are the times still open.',
  'form.back': '‹ Change time',
  'form.title': 'Your details',
  'form.name': 'Name',
  'form.email': 'Email',
  'form.notes': 'Notes',
  'form.notesHint': 'Anything that helps prepare',
  'form.booking': 'Booking…',
  'form.request': 'Request booking',
  'form.confirm': 'Confirm booking',
  'form.err.name': 'Please enter your name.',
  'form.err.email': 'Please enter a valid email address.',
  'form.err.notes': 'Notes can be at most 5000 characters.',
  'done.pending': 'Pending: the host will confirm',
  'done.confirmed': 'Confirmed',
  'done.pendingBefore': 'We sent your request to {host}. You will get an email at ',
  'done.pendingAfter': ' once it is confirmed.',
  'done.confirmedBefore': 'You are booked with {host}. A confirmation is on its way to ',
  'done.confirmedAfter': '.',
  'done.what': 'What',
  'done.when': 'When',
  'done.who': 'Who',
  'done.change': 'Need a change?',
  'done.reschedule': 'Reschedule',
  'done.or': 'or',
  'done.cancel': 'cancel',
  'done.end': '.',
  'manage.title': 'Your booking',
  'manage.invalid': 'Link not valid',
  'manage.invalidText': 'This booking link is not valid. Use the link from your most recent booking email.',
  'manage.loading': 'Loading your booking…',
  'manage.moved': 'Your booking has been moved. We emailed you the new time.',
  'manage.taken': 'Sorry, that time was just taken. Please pick another.',
  'manage.with': 'with {host}',
  'status.confirmed': 'Confirmed',
  'status.pending': 'Pending confirmation',
  'status.cancelled': 'Cancelled',
  'status.declined': 'Declined',
  'manage.cancelledNote': 'This booking is cancelled. The host has been told.',
  'manage.declinedNote': 'The host declined this request. You can pick another time on the booking page.',
  'manage.pendingNote': 'The host has not confirmed this request yet. You will get an email when they do.',
  'manage.when': 'When',
  'manage.length': 'Length',
  'manage.name': 'Name',
  'manage.notes': 'Notes',
  'manage.past': 'This booking is in the past and can no longer be changed.',
  'manage.reschedule': 'Reschedule',
  'manage.cancel': 'Cancel booking',
  'manage.cancelTitle': 'Cancel this booking?',
  'manage.reason': 'Reason',
  'manage.reasonHint': '(optional, shared with the host)',
  'manage.cancelling': 'Cancelling…',
  'manage.yesCancel': 'Yes, cancel it',
  'manage.keep': 'Keep booking',
  'manage.pickNew': 'Pick a new time',
  'manage.back': 'Back',
  'manage.moveTitle': 'Move your booking?',
  'manage.from': 'From',
  'manage.to': 'To',
  'manage.moving': 'Moving…',
  'manage.confirmMove': 'Confirm new time',
  'manage.pickAnother': 'Pick another time',
  'manage.bookAgain': 'Book a new time',
} as const;

export type MessageKey = keyof typeof en;
type Messages = Partial<Record<MessageKey, string>>;

/** Complete: typed with every key, so a key added to `en` and missing here fails the build. */
const de: Record<MessageKey, string> = {
  'facts.confirms': 'Der Gastgeber bestätigt jede Anfrage',
  'facts.where': 'Wo',
  'loc.video': 'Videoanruf',
  'loc.phone': 'Telefonat',
  'loc.in_person': 'Vor Ort',
  'loc.other': 'Details folgen per E-Mail',
  'cal.title': 'Zum Kalender hinzufügen',
  'cal.ics': '.ics herunterladen',
  'cal.google': 'Google Kalender',
  'cal.outlook': 'Outlook.com',
  'cal.summary': '{event} mit {host}',
  'cal.manage': 'Verschieben oder absagen: {url}',
  'picker.choose': 'Tag wählen',
  'picker.keys': '{month}: mit den Pfeiltasten zwischen den Tagen wechseln',
  'picker.noTimes': 'An diesem Tag sind keine Zeiten frei.',
  'picker.nextOpen': 'Nächster freier Tag ›',
  'picker.dayNoTimes': '{day}, keine freien Zeiten',
  'picker.dayOut': '{day}, nicht buchbar',
  'picker.prevMonth': 'Vorheriger Monat',
  'picker.nextMonth': 'Nächster Monat',
  'picker.zone': 'Zeitzone',
  'common.tryAgain': 'Erneut versuchen',
  'common.loading': 'Wird geladen…',
  'common.wrong': 'Etwas ist schiefgegangen',
  'common.network': 'Netzwerkfehler: Bitte prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  'common.busy': 'Gerade zu viele Anfragen. Bitte warten Sie eine Minute und versuchen Sie es erneut.',
  'common.powered': 'Terminplanung mit Muster',
  'common.optional': '(optional)',
  'duration.min': '{m} Min.',
  'duration.h': '{h} Std.',
  'duration.hmin': '{h} Std. {m} Min.',
  'book.title': 'Termin buchen',
  'book.invalidLink': 'Dieser Buchungslink ist ungültig.',
  'book.notFound': 'Seite nicht gefunden',
  'book.notFoundText': 'Diese Buchungsseite gibt es nicht, oder sie nimmt keine Buchungen an. Prüfen Sie den Link, den Sie erhalten haben.',
  'book.pick': 'Tag und Uhrzeit wählen',
  'book.taken': 'Diese Zeit wurde gerade vergeben. Hier sind die noch freien Zeiten.',
  'form.back': '‹ Andere Zeit',
  'form.title': 'Ihre Angaben',
  'form.name': 'Name',
  'form.email': 'E-Mail',
  'form.notes': 'Notizen',
  'form.notesHint': 'Alles, was bei der Vorbereitung hilft',
  'form.booking': 'Wird gebucht…',
  'form.request': 'Buchung anfragen',
  'form.confirm': 'Buchung bestätigen',
  'form.err.name': 'Bitte geben Sie Ihren Namen ein.',
  'form.err.email': 'Bitte geben Sie eine gültige E-Mail-Adresse ein.',
  'form.err.notes': 'Notizen dürfen höchstens 5000 Zeichen lang sein.',
  'done.pending': 'Angefragt: Der Gastgeber bestätigt',
  'done.confirmed': 'Bestätigt',
  'done.pendingBefore': 'Wir haben Ihre Anfrage an {host} gesendet. Sie erhalten eine E-Mail an ',
  'done.pendingAfter': ', sobald sie bestätigt ist.',
  'done.confirmedBefore': 'Ihr Termin mit {host} ist gebucht. Eine Bestätigung geht an ',
  'done.confirmedAfter': '.',
  'done.what': 'Was',
  'done.when': 'Wann',
  'done.who': 'Wer',
  'done.change': 'Etwas ändern?',
  'done.reschedule': 'Verschieben',
  'done.or': 'oder',
  'done.cancel': 'absagen',
  'done.end': '.',
  'manage.title': 'Ihre Buchung',
  'manage.invalid': 'Link ungültig',
  'manage.invalidText': 'Dieser Buchungslink ist ungültig. Verwenden Sie den Link aus Ihrer letzten E-Mail zu dieser Buchung.',
  'manage.loading': 'Ihre Buchung wird geladen…',
  'manage.moved': 'Ihre Buchung wurde verschoben. Die neue Zeit haben wir Ihnen per E-Mail geschickt.',
  'manage.taken': 'Diese Zeit wurde gerade vergeben. Bitte wählen Sie eine andere.',
  'manage.with': 'mit {host}',
  'status.confirmed': 'Bestätigt',
  'status.pending': 'Wartet auf Bestätigung',
  'status.cancelled': 'Abgesagt',
  'status.declined': 'Abgelehnt',
  'manage.cancelledNote': 'Diese Buchung ist abgesagt. Der Gastgeber wurde informiert.',
  'manage.declinedNote': 'Der Gastgeber hat diese Anfrage abgelehnt. Auf der Buchungsseite können Sie eine andere Zeit wählen.',
  'manage.pendingNote': 'Der Gastgeber hat diese Anfrage noch nicht bestätigt. Sie erhalten eine E-Mail, sobald das geschieht.',
  'manage.when': 'Wann',
  'manage.length': 'Dauer',
  'manage.name': 'Name',
  'manage.notes': 'Notizen',
  'manage.past': 'Dieser Termin liegt in der Vergangenheit und kann nicht mehr geändert werden.',
  'manage.reschedule': 'Verschieben',
  'manage.cancel': 'Buchung absagen',
  'manage.cancelTitle': 'Diese Buchung absagen?',
  'manage.reason': 'Grund',
  'manage.reasonHint': '(optional, wird dem Gastgeber mitgeteilt)',
  'manage.cancelling': 'Wird abgesagt…',
  'manage.yesCancel': 'Ja, absagen',
  'manage.keep': 'Buchung behalten',
  'manage.pickNew': 'Neue Zeit wählen',
  'manage.back': 'Zurück',
  'manage.moveTitle': 'Buchung verschieben?',
  'manage.from': 'Von',
  'manage.to': 'Auf',
  'manage.moving': 'Wird verschoben…',
  'manage.confirmMove': 'Neue Zeit bestätigen',
  'manage.pickAnother': 'Andere Zeit wählen',
  'manage.bookAgain': 'Neuen Termin buchen',
};

const MESSAGES: Record<string, Messages> = { en, de };

/** The visitor's language: the first of the browser's languages we have text for, else English (`?lang=` overrides, for tests and links). */
export function language(): string {
  const forced = typeof location !== 'undefined' ? new URLSearchParams(location.search).get('lang') : null;
  const wanted = [forced, ...(typeof navigator !== 'undefined' ? navigator.languages : [])].filter((l): l is string => !!l);
  for (const l of wanted) {
    const base = l.toLowerCase().split('-')[0]!;
    if (MESSAGES[base]) return base;
  }
  return 'en';
}

/** The locale for Intl date formats: `?lang=` when given, else the browser's own (dates follow the visitor's language even without a translation). */
export function locale(): string | undefined {
  const forced = typeof location !== 'undefined' ? new URLSearchParams(location.search).get('lang') : null;
  if (!forced) return undefined;
  try {
    return Intl.getCanonicalLocales(forced)[0];
  } catch {
    return undefined;
  }
}

/**
 * The visitor's BCP 47 tag, sent with a booking so the emails follow it: `?lang=` when given,
 * else the browser's first language (the server falls back to Accept-Language without one).
 */
export function visitorTag(): string | undefined {
  const tag = locale() ?? (typeof navigator !== 'undefined' ? navigator.languages?.[0] ?? navigator.language : undefined);
  return tag && tag.length <= 35 && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(tag) ? tag : undefined;
}

/** Marks the page with its language (`<html lang>`, for screen readers and hyphenation) and sets its title. */
export function startPage(titleKey: MessageKey): void {
  document.documentElement.lang = language();
  document.title = t(titleKey);
}

export function t(key: MessageKey, vars: Record<string, string> = {}): string {
  const text = MESSAGES[language()]?.[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? `{${k}}`);
}

/** A failure in words for the visitor: network trouble and rate limits in the page's language; the server's own message otherwise. */
export function failureText(err: unknown): string {
  if (err instanceof TypeError) return t('common.network');
  if (err instanceof ApiError && err.status === 429) return t('common.busy');
  return messageOf(err);
}
