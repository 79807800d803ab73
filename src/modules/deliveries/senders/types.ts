import type { OutboxRow } from '../outbox.repository.js';

/** What one attempt achieved: delivered, or nothing to do (no SMTP, no subscription, over a cap). */
export interface SendResult {
  outcome: 'sent' | 'skipped';
  statusCode?: number;
  note?: string;
}

/** A failed attempt. `permanent` stops the retries (a 410, a refused address). */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | null = null,
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}

export type Sender = (row: OutboxRow) => Promise<SendResult>;
