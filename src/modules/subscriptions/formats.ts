// The three bodies a subscription can receive, each in the shape its product documents:
// - `standard`: the Standard Webhooks envelope `{type, timestamp, data}` (standardwebhooks.com,
//   "Payload structure"), signed by the sender with the subscription's secret.
// - `chat`: a Slack incoming-webhook message, `text` plus Block Kit `blocks` (Slack, "Sending messages
//   using incoming webhooks"); Mattermost and Rocket.Chat incoming webhooks take the same JSON and
//   show its `text`, so `text` alone carries the whole message with its links.
// - `teams`: a Teams Workflows webhook message, `{type: "message", attachments: [an Adaptive Card]}`
//   (Microsoft Teams, "Create and send messages", "Send Adaptive Cards using an Incoming Webhook";
//   the Workflows trigger "When a Teams webhook request is received" takes the same body).
// docs/integrations.md, "Subscriptions", shows one of each.
import type { Incident, TimelineEvent } from '../incidents/index.js';
import type { IncidentEventName } from './events.js';

export const FORMATS = ['standard', 'chat', 'teams'] as const;
export type Format = (typeof FORMATS)[number];

/** An incident event as the formats need it: the incident as the API shows it, after the change. */
export interface IncidentMessage {
  type: IncidentEventName;
  at: string;
  incident: Incident;
  assigneeName: string | null;
  event: TimelineEvent;
  links: { incident: string; acknowledge: string };
}

/** A person going on call (`oncall.shift_started`). */
export interface ShiftMessage {
  type: 'oncall.shift_started';
  at: string;
  schedule: { id: number; name: string };
  user: { id: number; name: string };
  start: string;
  end: string;
  links: { schedule: string };
}

/** A device entering or leaving a site (`site.enter`, `site.exit`: modules/sites). */
export interface SiteMessage {
  type: 'site.enter' | 'site.exit';
  at: string;
  site: { id: number; name: string };
  user: { id: number; name: string };
  device_id: string | null;
  position: { lat: number; lng: number; accuracy: number | null };
  links: { map: string };
}

/** "send test" (POST .../webhooks/:id/test). */
export interface TestMessage {
  type: 'webhook.test';
  at: string;
  subscriptionId: number;
  orgName: string;
  events: readonly string[];
}

export type Message = IncidentMessage | ShiftMessage | SiteMessage | TestMessage;

const isSiteMessage = (m: Message): m is SiteMessage => m.type === 'site.enter' || m.type === 'site.exit';

/** The body for a format; `standard` is signed when sent (sender.ts), the others go as they are. */
export function render(format: Format, m: Message): unknown {
  if (format === 'standard') return standardBody(m);
  const c = content(m);
  return format === 'chat' ? chatBody(c) : teamsBody(c);
}

export function standardBody(m: Message): { type: string; timestamp: string; data: Record<string, unknown> } {
  if (m.type === 'webhook.test') return { type: m.type, timestamp: m.at, data: { subscription_id: m.subscriptionId, events: [...m.events] } };
  if (m.type === 'oncall.shift_started') return { type: m.type, timestamp: m.at, data: { schedule: m.schedule, user: m.user, start: m.start, end: m.end } };
  if (isSiteMessage(m)) return { type: m.type, timestamp: m.at, data: { site: m.site, user: m.user, device_id: m.device_id, position: m.position } };
  return { type: m.type, timestamp: m.at, data: { incident: m.incident, event: m.event, links: m.links } };
}

/** What a person reads, whatever the product: a headline, facts, an optional detail and links. */
interface Content {
  headline: string;
  facts: [string, string][];
  detail: string | null;
  links: [string, string][];
}

const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
const who = (e: TimelineEvent) => (e.actor ? e.actor.user_name || `user ${e.actor.user_id}` : null);

function headline(m: IncidentMessage): string {
  const i = m.incident;
  const n = `#${i.Id}`;
  const by = who(m.event);
  const byText = by ? ` by ${by}` : '';
  switch (m.type) {
    case 'incident.created':
      return `New ${i.priority} incident ${n}: ${i.title}`;
    case 'incident.acknowledged':
      return `Incident ${n} acknowledged${byText}: ${i.title}`;
    case 'incident.assigned':
      return `Incident ${n} assigned to ${m.assigneeName ?? 'someone'}: ${i.title}`;
    case 'incident.escalated':
      return `Incident ${n} escalated${typeof m.event.data.level === 'number' ? ` to level ${m.event.data.level}` : ''}: ${i.title}`;
    case 'incident.resolved':
      return `Incident ${n} resolved${byText}: ${i.title}`;
    case 'incident.reopened':
      return `Incident ${n} reopened${byText}: ${i.title}`;
    case 'incident.reply':
      return `Reply on incident ${n}${byText}: ${i.title}`;
    case 'signal.alert':
      return `Field alert on incident ${n}${byText}: ${i.title}`;
  }
}

function content(m: Message): Content {
  if (m.type === 'webhook.test') {
    return {
      headline: `Test message from Muster (${m.orgName})`,
      facts: [['Events', m.events.join(', ')]],
      detail: 'This subscription works: the events above will be posted here.',
      links: [],
    };
  }
  if (m.type === 'oncall.shift_started') {
    return { headline: `${m.user.name} is now on call: ${m.schedule.name}`, facts: [['Until', m.end]], detail: null, links: [['Open the schedule', m.links.schedule]] };
  }
  if (isSiteMessage(m)) {
    const device = m.device_id === null ? [] : ([['Device', m.device_id]] as [string, string][]);
    return {
      headline: `${m.user.name} ${m.type === 'site.enter' ? 'entered' : 'left'} ${m.site.name}`,
      facts: [...device, ['Position', `${m.position.lat}, ${m.position.lng}${m.position.accuracy === null ? '' : ` (±${m.position.accuracy} m)`}`], ['At', m.at]],
      detail: null,
      links: [['Open the map', m.links.map]],
    };
  }
  const i = m.incident;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const detail = m.type === 'incident.reply' ? text(m.event.data.body) : m.type === 'signal.alert' ? text(m.event.data.note) : m.type === 'incident.created' ? (i.description ?? '') : '';
  return {
    headline: headline(m),
    facts: [
      ['Priority', i.priority],
      ['Status', i.status],
      ['Assignee', m.assigneeName ?? 'Unassigned'],
    ],
    detail: detail.trim() === '' ? null : detail,
    links: [
      [`Open incident #${i.Id}`, m.links.incident],
      ['Acknowledge', m.links.acknowledge],
    ],
  };
}

/** Slack's mrkdwn escapes these three and nothing else ("Formatting text for app surfaces"). */
const mrkdwn = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Slack's limits: a header's text at most 150 characters, a section's 3000, a field's 2000; the
 * top-level `text` is the notification and what Mattermost and Rocket.Chat show.
 */
export function chatBody(c: Content) {
  const links = c.links.map(([label, url]) => `<${url}|${mrkdwn(label)}>`).join('  ·  ');
  const facts = c.facts.map(([k, v]) => `${k}: ${mrkdwn(v)}`).join(' · ');
  const text = [mrkdwn(clip(c.headline, 500)), facts, ...(c.detail ? [mrkdwn(clip(c.detail, 1000))] : []), ...(links ? [links] : [])].join('\n');
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: clip(c.headline, 150), emoji: false } },
    { type: 'section', fields: c.facts.map(([k, v]) => ({ type: 'mrkdwn', text: `*${k}*\n${mrkdwn(clip(v, 1900))}` })) },
  ];
  if (c.detail) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: mrkdwn(clip(c.detail, 2900)) } });
  if (links) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: links } });
  return { text, blocks };
}

/** An Adaptive Card (version 1.2: TextBlock, FactSet, Action.OpenUrl) in the message Teams takes. */
export function teamsBody(c: Content) {
  const body: unknown[] = [
    { type: 'TextBlock', text: c.headline, weight: 'Bolder', size: 'Medium', wrap: true },
    { type: 'FactSet', facts: c.facts.map(([title, value]) => ({ title, value })) },
  ];
  if (c.detail) body.push({ type: 'TextBlock', text: clip(c.detail, 2000), wrap: true });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.2',
          body,
          ...(c.links.length ? { actions: c.links.map(([title, url]) => ({ type: 'Action.OpenUrl', title, url })) } : {}),
        },
      },
    ],
  };
}
