/**
 * The checkout gateway's merchant SDK: payload encryption for any key size, a typed client
 * for every REST endpoint, webhook verification (Standard Webhooks) and a small GraphQL
 * client with typed operations and subscriptions.
 */
export { CheckoutClient, type CheckoutClientOptions, type RequestOptions, type ResponseMeta, type FetchLike } from './client';
export { CheckoutApiError, GraphQLRequestError } from './errors';
export { encryptPayload, parseEncryptionKey, blocksFor, EncryptionKeyError, MIN_KEY_BITS, MAX_KEY_BITS, type ParsedEncryptionKey } from './encryption';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders } from './webhooks';
export * from './graphql';
export type { CaptureMethod, CaptureOrderInput, GqlRefund, RefundOrderInput, RefundStatus, VoidOrderInput } from './after-sale';
export type { DisputeConnection, DisputeErrorCode, DisputesArgs, DisputeStatus, GqlDispute, SubmitDisputeEvidenceInput } from './disputes';
export type * from './types';
