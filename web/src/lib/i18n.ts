// The public pages' text in the visitor's language (issue 20). Each language is one flat table of
// keys; English is complete and is the fallback for any key a language lacks. Dates and times go
// through Intl with `locale()`, so they follow the visitor's language even where the text has no
// translation yet. Add a language: copy `en`, translate the values, add it to MESSAGES.

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
} as const;

export type MessageKey = keyof typeof en;
type Messages = Partial<Record<MessageKey, string>>;

const de: Messages = {
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
  return forced ?? undefined;
}

export function t(key: MessageKey, vars: Record<string, string> = {}): string {
  const text = MESSAGES[language()]?.[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? `{${k}}`);
}
