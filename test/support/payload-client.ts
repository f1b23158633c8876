/**
 * The merchant-side encryption of payloads, as the tests use it: the SDK's (packages/sdk), one
 * implementation for merchants, the hosted checkout page and this repository's own tests.
 *
 *   const data = encryptPayload({ reference: 'ORD-1' }, ENCRYPTION_KEY);
 *   // POST { "data": data } to an Encrypted endpoint
 */
export { encryptPayload, parseEncryptionKey } from '../../packages/sdk/src/encryption';
