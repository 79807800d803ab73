import type https from 'node:https';
import type { AppContext } from '../context.js';
import { emailSender, phoneSender, pushSender, webhookSender, type Senders } from '../modules/deliveries/index.js';
import { calendarSender } from '../modules/scheduling/index.js';
import { isSubscriptionDelivery, subscriptionSender } from '../modules/subscriptions/index.js';

/**
 * The outbox worker's sender of each delivery kind. Composed here, above the modules: the
 * calendar sender writes bookings (modules/scheduling) into calendars (modules/calendars), both of
 * which queue deliveries themselves (modules/deliveries). Webhooks are the booking webhooks'
 * (modules/deliveries) and the incident subscriptions' (modules/subscriptions), told apart by their payload.
 */
export function createSenders(ctx: AppContext, pushAgent?: https.Agent): Senders {
  const bookings = webhookSender(ctx);
  const subscriptions = subscriptionSender(ctx);
  const webhook: Senders['webhook'] = (row) => (isSubscriptionDelivery(row) ? subscriptions(row) : bookings(row));
  return { email: emailSender(ctx), webhook, push: pushSender(ctx, pushAgent), phone: phoneSender(ctx), calendar: calendarSender(ctx) };
}
