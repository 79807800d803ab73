// Issue 20: every form error names its field in words a person understands and the field is
// highlighted. The server's 422 `details` carry `{field, message}` in validator words
// (`must match format "timezone"`); these turn them into plain sentences.

const FIELD_LABEL: Record<string, string> = {
  title: 'Title',
  description: 'Description',
  location_name: 'Location',
  location: 'Location',
  org_id: 'Organization',
  name: 'Name',
  email: 'Email',
  password: 'Password',
  timezone: 'Time zone',
  'availability.timezone': 'Time zone',
  phone: 'Phone',
  slug: 'Link name',
  duration_minutes: 'Duration',
  max_advance_days: 'Bookable up to',
  min_notice_hours: 'Minimum notice',
  buffer_before_minutes: 'Buffer before',
  buffer_after_minutes: 'Buffer after',
  max_bookings_per_day: 'Maximum per day',
  slot_interval_minutes: 'Slot interval',
  webhook_url: 'Webhook URL',
  blackout_dates: 'Blocked dates',
  body: 'Reply',
  attendee_name: 'Name',
  attendee_email: 'Email',
  notes: 'Notes',
  start_time: 'Time',
  code: 'Code',
  lat: 'Latitude',
  lng: 'Longitude',
  radius_m: 'Radius',
  area: 'Corners',
  'area.coordinates': 'Corners',
};

/** `availability.weekly.2.start` -> "Start time (row 3)"; unknown names read as words. */
export function fieldLabel(field: string): string {
  if (FIELD_LABEL[field]) return FIELD_LABEL[field];
  // A nearest target's fields (the escalation policy editor, issue #38).
  const nearest = /\.targets\.(\d+)\.(count|within_m)$/.exec(field);
  if (nearest) return nearest[2] === 'count' ? 'How many' : 'Within (metres)';
  const weekly = /^availability\.weekly\.(\d+)\.(start|end|day)$/.exec(field);
  if (weekly) return `${weekly[2] === 'day' ? 'Day' : weekly[2] === 'start' ? 'Start time' : 'End time'} (row ${Number(weekly[1]) + 1})`;
  const last = field.split('.').filter((s) => !/^\d+$/.test(s)).pop() ?? field;
  const words = last.replace(/_/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : 'This field';
}

const FORMAT_TEXT: Record<string, string> = {
  timezone: 'Choose a time zone from the list, such as Europe/Berlin.',
  email: 'Enter an email address, such as name@example.com.',
  uri: 'Enter a full web address starting with https://.',
  'date-time': 'Enter a date and time.',
  date: 'Enter a date.',
};

/** A validator message in plain words; messages the server already wrote for people pass through. */
export function plainMessage(field: string, message: string): string {
  const m = message.trim();
  let r: RegExpExecArray | null;
  if (/^(is required|must have required property)/.test(m)) return 'This is required.';
  if ((r = /^must match format "([^"]+)"$/.exec(m))) return FORMAT_TEXT[r[1]!] ?? 'This is not in the expected form.';
  if (m === 'must match pattern "\\S"' || m === 'must match pattern "\\\\S"') return 'This cannot be empty.';
  if ((r = /^must NOT have fewer than (\d+) characters$/.exec(m))) return r[1] === '1' ? 'This cannot be empty.' : `Use at least ${r[1]} characters.`;
  if ((r = /^must NOT have more than (\d+) characters$/.exec(m))) return `Use at most ${r[1]} characters.`;
  if ((r = /^must NOT have more than (\d+) items$/.exec(m))) return `Use at most ${r[1]} entries.`;
  if ((r = /^must be >= (-?[\d.]+)$/.exec(m))) return `Enter ${r[1]} or more.`;
  if ((r = /^must be <= (-?[\d.]+)$/.exec(m))) return `Enter ${r[1]} or less.`;
  if (m === 'must be integer') return 'Enter a whole number.';
  if (m === 'must be number') return 'Enter a number.';
  if (m === 'must be boolean') return 'Choose yes or no.';
  if ((r = /^must be one of: (.+)$/.exec(m))) return `Choose one of: ${r[1]!.split(', ').join(', ')}.`;
  if (/^must match pattern/.test(m)) {
    if (field === 'phone') return 'Enter the number with its country code, such as +4915112345678.';
    if (/slug$/.test(field)) return 'Use lowercase letters, digits and dashes only.';
    if (/(^|\.)(start|end)$/.test(field)) return 'Enter a time as HH:MM, such as 09:00.';
    if (/date/.test(field)) return 'Enter a date as YYYY-MM-DD.';
    if (/url$/.test(field)) return 'Enter a full web address starting with https://.';
    return 'This is not in the expected form.';
  }
  // A message that is a sentence of its own ("the polygon intersects itself") stands alone.
  if (/^(the|a|an|each) /.test(m)) return `${m[0]!.toUpperCase()}${m.slice(1)}.`.replace(/\.\.$/, '.');
  // The service's own messages ("must be at most 2147483647", "is already taken") read well after the field's name.
  return /^[a-z]/.test(m) ? `${fieldLabel(field)} ${m}.`.replace(/\.\.$/, '.') : m;
}

/** The summary above a form: names each field to correct. */
export function summaryOf(fields: Record<string, string>): string {
  const names = [...new Set(Object.keys(fields).map(fieldLabel))];
  if (names.length === 1) return `Please correct ${names[0]}: ${Object.values(fields)[0]}`;
  return `Please correct these fields: ${names.join(', ')}.`;
}

/**
 * Marks the inputs of `form` named in `fields` (by `name`, by id `*-<field>`, or through
 * `data-field`) with aria-invalid and aria-describedby, clears the others, and focuses the first.
 */
export function highlightFields(form: HTMLElement, fields: Record<string, string>, focus: boolean): void {
  for (const el of Array.from(form.querySelectorAll<HTMLElement>('[aria-invalid="true"][data-marked]'))) {
    el.removeAttribute('aria-invalid');
    el.removeAttribute('data-marked');
  }
  let first: HTMLElement | null = null;
  for (const field of Object.keys(fields)) {
    const last = field.split('.').pop() ?? field;
    const el =
      form.querySelector<HTMLElement>(`[data-field="${CSS.escape(field)}"]`) ??
      form.querySelector<HTMLElement>(`[name="${CSS.escape(field)}"]`) ??
      form.querySelector<HTMLElement>(`[name="${CSS.escape(last)}"]`) ??
      form.querySelector<HTMLElement>(`[id$="-${CSS.escape(last)}"]`);
    if (!el) continue;
    el.setAttribute('aria-invalid', 'true');
    el.setAttribute('data-marked', '');
    if (document.getElementById(`err-${field}`)) el.setAttribute('aria-describedby', `err-${field}`);
    first ??= el;
  }
  if (focus && first) first.focus();
}
