/**
 * The classes of actions the permission table (`authorization.ts`) is written in. A leaf with no
 * imports, so the dashboard's browser code can name the classes a session may use without the
 * service's entities. An action belongs to one class:
 * - `client`: what a browser or app does with the public key (create and pay orders, an order's
 *   status, listing links, reference data, status subscriptions);
 * - `read`: orders with customer and card data, links, refunds, disputes, the summary;
 * - `links.write`: create, edit, activate and disable payment links;
 * - `payments.write`: refund, capture, void, answer disputes, cancel a subscription;
 * - `developers`: webhook URL, test pings, deliveries, the public and encryption keys;
 * - `secrets`: the private key, the webhook signing secret, merchant settings, the audit log;
 * - `members`: invite, change the role of, remove and list members.
 */
export type ActionClass = 'client' | 'read' | 'links.write' | 'payments.write' | 'developers' | 'secrets' | 'members';

export const ACTION_CLASSES: readonly ActionClass[] = ['client', 'read', 'links.write', 'payments.write', 'developers', 'secrets', 'members'];
