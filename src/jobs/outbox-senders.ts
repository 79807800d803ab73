import type https from 'node:https';
import type { AppContext } from '../context.js';
import { emailSender, phoneSender, pushSender, webhookSender, type Senders } from '../modules/deliveries/index.js';
import { calendarSender } from '../modules/scheduling/index.js';

/**
 * The outbox worker's sender of each delivery kind. Composed here, above the modules: the
 * calendar sender writes bookings (modules/scheduling) into calendars (modules/calendars), both of
 * which queue deliveries themselves (modules/deliveries).
 */
export function createSenders(ctx: AppContext, pushAgent?: https.Agent): Senders {
  return { email: emailSender(ctx), webhook: webhookSender(ctx), push: pushSender(ctx, pushAgent), phone: phoneSender(ctx), calendar: calendarSender(ctx) };
}
