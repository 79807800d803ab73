// The public surface of incident subscriptions (issue #37): an org's webhooks for incident events,
// in three formats (standard, chat, teams). Subscriptions sit above incidents, oncall, orgs and
// deliveries in the dependency layers (docs/architecture.md, "Dependency rules"): incidents reach
// them only through `ctx.subscriptions` (subscriptionsPort, built by context.ts), called for every
// timeline event it records; the outbox worker sends their deliveries with subscriptionSender
// (composed in jobs/outbox-senders.ts); the job scheduler runs sendShiftStarts.
export type { SubscriptionTables } from './subscriptions.tables.js';
export { subscriptionsRoutes } from './subscriptions.routes.js';
export { subscriptionsPort, type SubscriptionsPort } from './hook.js';
export { isSubscriptionDelivery, subscriptionSender } from './sender.js';
export { sendShiftStarts } from './shifts.js';
