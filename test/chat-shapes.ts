// The message shapes of the chat products an incident subscription posts to, taken from each
// product's own documentation, with a checker per shape and a local stand-in receiver that answers
// as the product does (docs/integrations.md, "Subscriptions"). Each checker is run on the
// documentation's own example first (subscriptions.test.ts), so it is the documented shape that
// Muster's bodies are held to, not one made up here.
import type { ReceivedRequest, Reply } from './peers.js';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const only = (o: Json, keys: readonly string[], where: string, problems: string[]) => {
  for (const k of Object.keys(o)) if (!keys.includes(k)) problems.push(`${where}: unexpected property ${k}`);
};

// ---------------------------------------------------------------------------------------------
// Slack: "Sending messages using incoming webhooks" (docs.slack.dev/messaging/sending-messages-using-incoming-webhooks,
// formerly api.slack.com/messaging/webhooks) and the Block Kit reference (docs.slack.dev/reference/block-kit).
// POST JSON with `text` (the notification, and what Mattermost and Rocket.Chat show) and optional
// `blocks`; Slack answers 200 `ok`, or 400 `invalid_payload` / `invalid_blocks`, 404
// `channel_not_found` / `no_service`, 410 `channel_is_archived`.
// ---------------------------------------------------------------------------------------------

/** The documentation's example message (its image accessory left out). */
export const SLACK_DOC_EXAMPLE = {
  text: 'Danny Torrence left a 1 star review for your property.',
  blocks: [
    { type: 'section', text: { type: 'mrkdwn', text: 'Danny Torrence left the following review for your property:' } },
    {
      type: 'section',
      block_id: 'section567',
      text: { type: 'mrkdwn', text: '<https://example.com|Overlook Hotel> \n :star: \n Doors had too many axe holes, guest in room 237 was far too rowdy, whole place felt stuck in the 1920s.' },
    },
    { type: 'section', block_id: 'section789', fields: [{ type: 'mrkdwn', text: '*Average Rating*\n1.0' }] },
  ],
};

function slackText(t: unknown, where: string, max: number, problems: string[], plainOnly = false): void {
  if (!isObj(t)) return void problems.push(`${where}: a text object`);
  only(t, ['type', 'text', 'emoji', 'verbatim'], where, problems);
  if (t.type !== 'plain_text' && (plainOnly || t.type !== 'mrkdwn')) problems.push(`${where}.type: ${plainOnly ? 'plain_text' : 'plain_text or mrkdwn'}`);
  if (typeof t.text !== 'string' || t.text.length < 1 || t.text.length > max) problems.push(`${where}.text: 1 to ${max} characters`);
  if (t.emoji !== undefined && t.type !== 'plain_text') problems.push(`${where}.emoji: only on plain_text`);
}

/** The problems of a Slack incoming-webhook message (empty: Slack would take it). */
export function slackProblems(m: unknown): string[] {
  const problems: string[] = [];
  if (!isObj(m)) return ['a JSON object'];
  if (typeof m.text !== 'string' || m.text.trim() === '') problems.push('text: the notification text (and what Mattermost and Rocket.Chat show)');
  if (m.blocks === undefined) return problems;
  if (!Array.isArray(m.blocks) || m.blocks.length > 50) return [...problems, 'blocks: at most 50'];
  m.blocks.forEach((b: unknown, i) => {
    const at = `blocks.${i}`;
    if (!isObj(b)) return void problems.push(`${at}: an object`);
    if (b.block_id !== undefined && (typeof b.block_id !== 'string' || b.block_id.length > 255)) problems.push(`${at}.block_id: at most 255 characters`);
    switch (b.type) {
      case 'header':
        only(b, ['type', 'text', 'block_id'], at, problems);
        slackText(b.text, `${at}.text`, 150, problems, true);
        break;
      case 'section':
        only(b, ['type', 'text', 'fields', 'block_id', 'accessory'], at, problems);
        if (b.text === undefined && b.fields === undefined) problems.push(`${at}: text or fields`);
        if (b.text !== undefined) slackText(b.text, `${at}.text`, 3000, problems);
        if (b.fields !== undefined) {
          if (!Array.isArray(b.fields) || b.fields.length < 1 || b.fields.length > 10) problems.push(`${at}.fields: 1 to 10`);
          else b.fields.forEach((f: unknown, j) => slackText(f, `${at}.fields.${j}`, 2000, problems));
        }
        break;
      case 'divider':
        only(b, ['type', 'block_id'], at, problems);
        break;
      case 'context':
        only(b, ['type', 'elements', 'block_id'], at, problems);
        if (!Array.isArray(b.elements) || b.elements.length < 1 || b.elements.length > 10) problems.push(`${at}.elements: 1 to 10`);
        else b.elements.forEach((e: unknown, j) => slackText(e, `${at}.elements.${j}`, 3000, problems));
        break;
      default:
        problems.push(`${at}.type: ${String(b.type)} is not a block this message uses`);
    }
  });
  return problems;
}

/** Answers as Slack's incoming webhook does: `ok`, or 400 `invalid_payload` / `invalid_blocks`. */
export function slackAnswer(r: ReceivedRequest): Reply {
  let m: unknown;
  try {
    m = JSON.parse(r.text);
  } catch {
    return { status: 400, body: 'invalid_payload' };
  }
  if (!String(r.headers['content-type']).startsWith('application/json')) return { status: 400, body: 'invalid_payload' };
  return slackProblems(m).length === 0 ? { status: 200, headers: { 'content-type': 'text/html' }, body: 'ok' } : { status: 400, body: 'invalid_blocks' };
}

// ---------------------------------------------------------------------------------------------
// Microsoft Teams: "Create and send messages", section "Send Adaptive Cards using an Incoming
// Webhook" (learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using),
// which the Workflows trigger "When a Teams webhook request is received" takes as it is. Its
// checklist: `type` is "message"; `attachments` holds the cards; each `contentType` is
// application/vnd.microsoft.card.adaptive; `content` is the card. Supported actions:
// Action.OpenUrl, Action.ShowCard, Action.ToggleVisibility (not Action.Submit). A message is at most 28 KB.
// ---------------------------------------------------------------------------------------------

/** The documentation's example message. */
export const TEAMS_DOC_EXAMPLE = {
  type: 'message',
  attachments: [
    {
      contentType: 'application/vnd.microsoft.card.adaptive',
      contentUrl: null,
      content: {
        $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
        type: 'AdaptiveCard',
        version: '1.2',
        body: [{ type: 'TextBlock', text: 'For Samples and Templates, see [https://adaptivecards.io/samples](https://adaptivecards.io/samples)' }],
      },
    },
  ],
};

const CARD_ELEMENTS = ['TextBlock', 'FactSet', 'Image', 'ColumnSet', 'Container'];
const CARD_ACTIONS = ['Action.OpenUrl', 'Action.ShowCard', 'Action.ToggleVisibility'];

/** The problems of a Teams webhook message with Adaptive Cards (empty: Teams would take it). */
export function teamsProblems(m: unknown, raw?: string): string[] {
  const problems: string[] = [];
  if (raw !== undefined && Buffer.byteLength(raw) > 28 * 1024) problems.push('at most 28 KB');
  if (!isObj(m)) return ['a JSON object'];
  if (m.type !== 'message') problems.push('type: "message"');
  if (!Array.isArray(m.attachments) || m.attachments.length < 1) return [...problems, 'attachments: the cards'];
  m.attachments.forEach((a: unknown, i) => {
    const at = `attachments.${i}`;
    if (!isObj(a)) return void problems.push(`${at}: an object`);
    if (a.contentType !== 'application/vnd.microsoft.card.adaptive') problems.push(`${at}.contentType: application/vnd.microsoft.card.adaptive`);
    if (!('contentUrl' in a) || a.contentUrl !== null) problems.push(`${at}.contentUrl: null`);
    const c = a.content;
    if (!isObj(c)) return void problems.push(`${at}.content: the card`);
    if (c.type !== 'AdaptiveCard') problems.push(`${at}.content.type: AdaptiveCard`);
    if (c.$schema !== 'http://adaptivecards.io/schemas/adaptive-card.json') problems.push(`${at}.content.$schema`);
    if (typeof c.version !== 'string' || !/^1\.\d$/.test(c.version)) problems.push(`${at}.content.version: 1.x`);
    if (!Array.isArray(c.body)) return void problems.push(`${at}.content.body: the elements`);
    c.body.forEach((e: unknown, j) => {
      const where = `${at}.content.body.${j}`;
      if (!isObj(e) || !CARD_ELEMENTS.includes(String(e.type))) return void problems.push(`${where}.type: one of ${CARD_ELEMENTS.join(', ')}`);
      if (e.type === 'TextBlock' && (typeof e.text !== 'string' || e.text === '')) problems.push(`${where}.text: required`);
      if (e.type === 'FactSet' && (!Array.isArray(e.facts) || !e.facts.every((f: unknown) => isObj(f) && typeof f.title === 'string' && typeof f.value === 'string')))
        problems.push(`${where}.facts: [{title, value}] strings`);
    });
    if (c.actions !== undefined) {
      if (!Array.isArray(c.actions)) return void problems.push(`${at}.content.actions: an array`);
      c.actions.forEach((x: unknown, j) => {
        const where = `${at}.content.actions.${j}`;
        if (!isObj(x) || !CARD_ACTIONS.includes(String(x.type))) return void problems.push(`${where}.type: one of ${CARD_ACTIONS.join(', ')}`);
        if (x.type === 'Action.OpenUrl' && (typeof x.url !== 'string' || !/^https?:\/\//.test(x.url))) problems.push(`${where}.url: an http(s) URL`);
      });
    }
  });
  return problems;
}

/** Answers as a Teams Workflows webhook does: 202 Accepted, or 400 for a body it cannot take. */
export function teamsAnswer(r: ReceivedRequest): Reply {
  let m: unknown;
  try {
    m = JSON.parse(r.text);
  } catch {
    return { status: 400, body: '{"error":{"code":"InvalidRequestContent"}}' };
  }
  return teamsProblems(m, r.text).length === 0 ? { status: 202 } : { status: 400, body: '{"error":{"code":"InvalidRequestContent"}}' };
}
