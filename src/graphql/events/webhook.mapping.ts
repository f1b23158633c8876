import type { WebhookDeliveryView } from '../../events/webhook-dispatcher';
import type { WebhookDeliveryType } from './webhook.types';

/** A webhook delivery, with its attempts, as the schema shows it. */
export const toWebhookDeliveryType = (d: WebhookDeliveryView): WebhookDeliveryType => ({ ...d, state: d.state });
