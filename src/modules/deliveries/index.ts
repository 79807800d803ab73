// The public surface of modules/deliveries: other modules import only this file (docs/architecture.md, "Dependency rules").
export { deliveriesRoutes } from './deliveries.routes.js';
export { emailDelivery, queueEmail } from './email.js';
export { outgoingTarget, postGuarded, type PostResult } from './http-post.js';
export { type FeedEvent, type Invitation, feedIcs } from './ics.js';
export type { OutboxRow } from './outbox.repository.js';
export { type Delivery, phoneAlert, queueDeliveries, queueDelivery } from './outbox.js';
export { usersWithPush } from './push-subscriptions.repository.js';
export { reachReason } from './reach.js';
export { DeliveryError, type SendResult } from './senders/types.js';
export { BlockedAddressError, guardedLookup } from './ssrf.js';
export { refusePlainlyPrivate } from './url-guard.js';
export { calendarObjectIcs } from './ics.js';
export { emailSender } from './senders/email.js';
export { phoneSender } from './senders/phone.js';
export { pushSender } from './senders/push.js';
export type { Sender } from './senders/types.js';
export { webhookSender } from './senders/webhook.js';
export { startOutboxWorker, type Senders } from './worker.js';
