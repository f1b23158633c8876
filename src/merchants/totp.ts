import { createHash, randomInt } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';

/**
 * TOTP (RFC 6238) as authenticator apps speak it: SHA-1, 6 digits, 30-second steps, a 160-bit
 * Base32 secret. A code is accepted one step early or late (clocks drift, people type slowly).
 */
const PERIOD_SECONDS = 30;
const DIGITS = 6;
const WINDOW_STEPS = 1;

/** The name an authenticator app shows above the member's email. */
export const TOTP_ISSUER = 'Checkout gateway';

export const RECOVERY_CODE_COUNT = 10;
/** Crockford's Base32, lower-case: no i, l, o or u to misread. 10 characters: 50 random bits. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RECOVERY_LENGTH = 10;

export function newTotpSecret(): string {
  return generateSecret();
}

/** The otpauth:// URI an authenticator app reads (from a QR code): issuer and the member's email as label. */
export function totpUri(secret: string, email: string): string {
  return generateURI({ issuer: TOTP_ISSUER, label: email, secret, digits: DIGITS, period: PERIOD_SECONDS });
}

/** The time step of an instant: codes of one step are the same. */
export function timeStepAt(now: Date): number {
  return Math.floor(now.getTime() / 1000 / PERIOD_SECONDS);
}

/** A code as typed: spaces and hyphens dropped; a six-digit string, or undefined. */
export function totpCodeOf(input: string): string | undefined {
  const code = input.replace(/[\s-]/g, '');
  return /^\d{6}$/.test(code) ? code : undefined;
}

/**
 * The time step the code belongs to, when it is valid at `now` (within one step either side) and
 * newer than `afterStep` (the last step accepted); undefined otherwise.
 */
export async function matchTotp(secret: string, code: string, now: Date, afterStep: number | null): Promise<number | undefined> {
  const current = timeStepAt(now);
  // Every step of the window is already used (the clock went back): nothing can match.
  if (afterStep !== null && afterStep >= current + WINDOW_STEPS) return undefined;
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(now.getTime() / 1000),
    period: PERIOD_SECONDS,
    digits: DIGITS,
    epochTolerance: WINDOW_STEPS * PERIOD_SECONDS,
    ...(afterStep !== null && afterStep >= 0 ? { afterTimeStep: afterStep } : {}),
  });
  // The TOTP strategy's answer names the step matched (the type also covers HOTP's, which has none).
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}

/** Ten fresh recovery codes, shown as `xxxxx-xxxxx`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: RECOVERY_LENGTH }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** The stored form of a recovery code: the SHA-256 of its normalised text (50 random bits need no slow hash). */
export function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(`recovery-code:${code}`, 'utf8').digest('hex');
}

/** A recovery code as typed (any case, with or without its hyphen and spaces), normalised; undefined when it cannot be one. */
export function recoveryCodeOf(input: string): string | undefined {
  const code = input.replace(/[\s-]/g, '').toLowerCase();
  if (code.length !== RECOVERY_LENGTH || ![...code].every((c) => RECOVERY_ALPHABET.includes(c))) return undefined;
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}
