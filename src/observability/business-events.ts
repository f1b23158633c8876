import type { FastifyBaseLogger } from 'fastify';

/*
 * What the domains report after each commit, as this file reads it (the shapes are the domains'
 * own: declared here by what is used, so observability depends on no domain).
 */
interface OrderCreated {
  environmentId: number;
  reference: string;
  amount: string;
  currency: string;
}
interface PaymentOutcome {
  environmentId: number;
  reference: string;
  method: string | null;
  status: 'pending' | 'successful' | 'failed' | 'authorized' | 'voided';
  code: string;
  actor: string;
}
interface WebhookAttempt {
  result: 'delivered' | 'retry' | 'dead' | 'stale';
  statusCode: number | null;
  deliveryId: string;
  attempt: number;
  orderReference: string | null;
}
interface KeysRotated {
  environmentId: number;
  subsidiaryId: number;
  mode: string;
  kinds: string[];
  expiresAt: Date;
}
interface MailOutcome {
  kind: string;
  subsidiaryId: number | null;
  result: 'sent' | 'retry' | 'failed';
  reason?: string;
}

export interface BusinessEventSources {
  orders: { onCreated(listener: (created: OrderCreated) => void): () => void };
  payments: { onOutcome(listener: (outcome: PaymentOutcome) => void): () => void };
  webhooks: { onAttempt(listener: (attempt: WebhookAttempt) => void): () => void };
  merchants: { onKeysRotated(listener: (notice: KeysRotated) => void): () => void };
  teamMail: { onOutcome(listener: (outcome: MailOutcome) => void): () => void };
}

/** How each payment outcome is named in the log (an authorization is held money, a void released money). */
const PAYMENT_EVENT = { successful: 'settled', failed: 'failed', authorized: 'authorized', voided: 'voided' } as const;

const WEBHOOK_MESSAGE = { delivered: 'webhook delivered', retry: 'webhook retried', dead: 'webhook dead' } as const;

/**
 * One info line per business event, written by the instance that committed it: `order created`,
 * `payment settled`, `payment failed`, `payment authorized`, `payment voided`, `webhook delivered`, `webhook retried`, `webhook dead`,
 * `keys rotated`, `email sent` and (at warn) `email failed`. Each names the order by its reference
 * (the keys and email lines: the merchant) in `event` and fields of its own; never a key, a
 * secret, a link's token or card data.
 * Returns the unsubscribe.
 */
export function logBusinessEvents(log: FastifyBaseLogger, sources: BusinessEventSources): () => void {
  const stops = [
    sources.orders.onCreated((o) => {
      log.info({ event: 'order.created', reference: o.reference, environmentId: o.environmentId, amount: o.amount, currency: o.currency }, 'order created');
    }),
    sources.payments.onOutcome((o) => {
      if (o.status === 'pending') return; // not an outcome yet (e.g. waiting for 3-D Secure)
      const name = PAYMENT_EVENT[o.status];
      log.info(
        {
          event: `payment.${name}`,
          reference: o.reference,
          environmentId: o.environmentId,
          method: o.method,
          code: o.code,
          actor: o.actor,
        },
        `payment ${name}`,
      );
    }),
    sources.webhooks.onAttempt((a) => {
      if (a.result === 'stale') return; // another worker owns the delivery now: it logs the outcome
      log.info(
        { event: `webhook.${a.result}`, reference: a.orderReference, deliveryId: a.deliveryId, attempt: a.attempt, statusCode: a.statusCode },
        WEBHOOK_MESSAGE[a.result],
      );
    }),
    sources.merchants.onKeysRotated((k) => {
      log.info(
        {
          event: 'keys.rotated',
          subsidiaryId: k.subsidiaryId,
          environment: k.mode,
          environmentId: k.environmentId,
          kinds: k.kinds,
          previousKeysExpireAt: k.expiresAt.toISOString(),
        },
        'keys rotated',
      );
    }),
    sources.teamMail.onOutcome((m) => {
      const fields = { event: `email.${m.result}`, kind: m.kind, subsidiaryId: m.subsidiaryId };
      if (m.result === 'sent') log.info(fields, 'email sent');
      else log.warn({ ...fields, reason: m.reason }, m.result === 'retry' ? 'email attempt failed; tried again later' : 'email failed');
    }),
  ];
  return () => stops.forEach((stop) => stop());
}
