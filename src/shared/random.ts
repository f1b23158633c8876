import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'; // no 0/O, 1/I: read aloud on support calls

/** An unguessable reference like `PL-7Q2M…`: 5 bits per character from a CSPRNG. */
export function randomReference(prefix: string, length = 20): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! & 31];
  return `${prefix}${out}`;
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
