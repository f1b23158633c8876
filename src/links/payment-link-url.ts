/**
 * Where a payment link's page is: `/pay/<reference>` on this service's public URL. Every
 * answer that shows a link's address (REST, GraphQL, webhooks, the checkout page, the demo)
 * builds it here.
 */
export const paymentLinkPath = (reference: string): string => `/pay/${reference}`;

/** The absolute address of a payment link's page. */
export const paymentLinkUrl = (publicUrl: string, reference: string): string => `${publicUrl}${paymentLinkPath(reference)}`;

/** The page a customer returns to after paying on a link's page (when the link names no website). */
export const paymentLinkResultUrl = (publicUrl: string, reference: string): string => `${paymentLinkUrl(publicUrl, reference)}/result`;
