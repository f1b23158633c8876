import type { Order } from '../orders/order.entity';
import { OrderStatus } from '../orders/order-status';
import type { PaymentLink } from '../links/payment-link.entity';
import { escapeHtml, formatAmount, page } from './html';

/** What the result page shows, decided by the order's stored state alone (never by the address's `status`). */
export type ResultOutcome = 'successful' | 'authorized' | 'voided' | 'failed' | 'in_progress';

export function outcomeOfOrder(order: Pick<Order, 'statusId'>): ResultOutcome {
  if (order.statusId === OrderStatus.Successful) return 'successful';
  if (order.statusId === OrderStatus.Authorized) return 'authorized';
  if (order.statusId === OrderStatus.Voided) return 'voided';
  if (order.statusId === OrderStatus.Failed) return 'failed';
  return 'in_progress';
}

/**
 * The way back to the merchant: the link's website, else the order's redirect URL when it is
 * not this very page. Only http(s) addresses are offered.
 */
export function merchantReturnUrl(link: PaymentLink, order: Pick<Order, 'redirectUrl'>, resultPageUrl: string): string | null {
  for (const candidate of [link.website, order.redirectUrl]) {
    if (!candidate) continue;
    let url: URL;
    try {
      url = new URL(candidate);
    } catch {
      continue;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') continue;
    if (`${url.origin}${url.pathname}` === resultPageUrl) continue;
    return url.toString();
  }
  return null;
}

/** The hosted result page of a payment-link order. */
export function resultPage(link: PaymentLink, order: Order, urls: { linkUrl: string; resultUrl: string; back: string | null }): string {
  const merchant = link.environment.subsidiary.name;
  const outcome = outcomeOfOrder(order);
  const amount = formatAmount(order.totalChargedAmount, order.currency);
  const reference = `<p>Payment reference: <strong data-testid="reference">${escapeHtml(order.reference)}</strong></p>`;
  const back = urls.back
    ? `<p><a class="button" data-testid="back" href="${escapeHtml(urls.back)}">Return to ${escapeHtml(merchant)}</a></p>`
    : '<p>You can close this page.</p>';
  const head = `<p class="merchant">${escapeHtml(merchant)}</p>`;
  if (outcome === 'successful') {
    return page(
      'Payment successful',
      `${head}<h1 class="good" data-outcome="successful">Payment successful</h1>
<p>You paid <strong class="amount" data-testid="amount">${escapeHtml(amount)}</strong> for ${escapeHtml(link.name)}.</p>
${reference}${back}`,
    );
  }
  if (outcome === 'authorized') {
    // Held, not taken (the merchant captures it later): say so, in the customer's words.
    return page(
      'Payment authorised',
      `${head}<h1 class="good" data-outcome="authorized">Payment authorised</h1>
<p>Your bank has approved <strong class="amount" data-testid="amount">${escapeHtml(amount)}</strong> for ${escapeHtml(link.name)}, but <strong>you have not been charged yet</strong>: ${escapeHtml(merchant)} will take the payment when your order is confirmed. Until then the amount may show as pending on your statement.</p>
${reference}${back}`,
    );
  }
  if (outcome === 'voided') {
    return page(
      'Payment released',
      `${head}<h1 data-outcome="voided">Payment released</h1>
<p>The ${escapeHtml(amount)} your bank held for ${escapeHtml(link.name)} has been released. <strong>You were not charged.</strong></p>
${reference}${back}`,
    );
  }
  if (outcome === 'failed') {
    return page(
      'Payment failed',
      `${head}<h1 class="bad" data-outcome="failed">Payment failed</h1>
<p>Your payment of ${escapeHtml(amount)} did not go through. No money was taken.</p>
${reference}<p><a class="button" href="${escapeHtml(urls.linkUrl)}">Try again</a></p>${back}`,
    );
  }
  const self = new URL(urls.resultUrl);
  self.searchParams.set('reference', order.reference);
  return page(
    'Payment in progress',
    `${head}<h1 data-outcome="in_progress">Your payment is in progress</h1>
<p>Your payment of ${escapeHtml(amount)} has not been completed yet. Nothing more is needed from you unless your bank asks.</p>
${reference}<p><a href="${escapeHtml(self.toString())}">Check again</a></p>${back}`,
  );
}
