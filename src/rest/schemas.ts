import { bankRouteSchemas } from './schemas/banks';
import { linkRouteSchemas } from './schemas/links';
import { orderRouteSchemas } from './schemas/orders';

/**
 * The shim's schemas, in TypeBox: request bodies and decrypted plaintexts are read with them
 * (`readInput`), routes declare them, and the OpenAPI document is generated from them.
 * Response schemas describe what the presenters build; a test checks real responses against
 * them and type-checks a client generated from the document.
 *
 * Property names are the canonical ones; clients may send any casing, and the aliases listed
 * under `x-aliases` (names legacy clients use), see `canonicalise` in src/shared/input.ts.
 */
export { EncryptedBody, ErrorBody, Subsidiary } from './schemas/common';
export { LinkCreateBody, LinkEditBody, PaymentLink } from './schemas/links';
export { CreateOrderPlaintext, FeePlaintext, PayPlaintext, PLAINTEXTS, StatusPlaintext, TrackPlaintext } from './schemas/order-plaintexts';
export { OrderDetails, VerifyBody } from './schemas/orders';

/** Every route's schema, by route: links, orders, banks. */
export const routeSchemas = { ...linkRouteSchemas, ...orderRouteSchemas, ...bankRouteSchemas };

export type RouteSchemaName = keyof typeof routeSchemas;
