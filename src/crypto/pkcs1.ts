/**
 * Constant-time removal of PKCS#1 v1.5 encryption padding (RFC 8017 §7.2.2) with implicit
 * rejection:
 *
 *   EM = 0x00 || 0x02 || PS (≥ 8 non-zero bytes) || 0x00 || M        (k = EM length)
 *
 * Approach (why: Bleichenbacher/Marvin timing oracles):
 * - every byte of EM is visited whatever its value; validity is accumulated in all-ones/zero
 *   masks with arithmetic, never with branches or early exits on secret bytes;
 * - M is the tail of EM, so both candidates are laid out right-aligned in a buffer of the
 *   largest possible message size (k - 11): byte i takes EM[11 + i] or the synthetic byte
 *   through a mask, the same reads and writes for valid and invalid padding;
 * - on invalid padding the caller's synthetic message replaces M. Its length is taken from
 *   the synthetic bytes too, so the result looks like any other decryption and the failure
 *   only shows up later (invalid UTF-8/JSON), as with a payload under another key.
 *
 * `syntheticOnFailure` must hold at least syntheticBytesNeeded(k) pseudo-random bytes:
 * bytes [0, k - 11) are the candidate message, the next two its length source. Only the
 * returned length depends on the secret outcome; that is inherent (the message is returned).
 *
 * JavaScript gives no hard guarantee (the JIT could compile masks into branches), but this
 * keeps the code free of data-dependent control flow and memory access.
 */
export function unpadPkcs1v15(em: Buffer, syntheticOnFailure: Buffer): Buffer {
  const k = em.length;
  if (k < 11) throw new RangeError('PKCS#1 v1.5: encoded message shorter than 11 bytes');
  const maxLength = k - 11;
  if (syntheticOnFailure.length < syntheticBytesNeeded(k)) {
    throw new RangeError(`PKCS#1 v1.5: the synthetic message needs ${syntheticBytesNeeded(k)} bytes`);
  }

  // good: -1 (all ones) while the padding is valid, 0 once anything is wrong.
  let good = isZero(em[0]!) & isZero(em[1]! ^ 0x02);
  let lookingForZero = -1;
  let zeroIndex = 0; // index of the first 0x00 after the header, 0 when none
  for (let i = 2; i < k; i++) {
    const zero = isZero(em[i]!);
    zeroIndex = select(lookingForZero & zero, i, zeroIndex);
    lookingForZero &= ~zero;
  }
  good &= ~lookingForZero; // a separator was found…
  good &= ~lessThan(zeroIndex, 10); // …after at least 8 PS bytes
  const realLength = k - 1 - zeroIndex; // meaningless (but in range) when !good

  // Synthetic length in [0, maxLength]: 16 bits masked down to the smallest all-ones value
  // ≥ maxLength, then folded once (that value is ≤ 2·maxLength + 1).
  const lengthMask = allOnesAtLeast(maxLength);
  const drawn = ((syntheticOnFailure[maxLength]! << 8) | syntheticOnFailure[maxLength + 1]!) & lengthMask;
  const syntheticLength = select(lessThan(maxLength, drawn), drawn - maxLength - 1, drawn);

  const out = Buffer.allocUnsafe(maxLength);
  for (let i = 0; i < maxLength; i++) {
    out[i] = select(good, em[11 + i]!, syntheticOnFailure[i]!);
  }
  const length = select(good, realLength, syntheticLength);
  return out.subarray(maxLength - length);
}

/** How many synthetic bytes unpadPkcs1v15 needs for a k-byte encoded message. */
export function syntheticBytesNeeded(k: number): number {
  return k - 11 + 2;
}

/** -1 when x == 0, else 0 (0 ≤ x < 2^31). */
function isZero(x: number): number {
  return ((x | 0) - 1) >> 31;
}

/** -1 when a < b, else 0 (0 ≤ a, b < 2^30). */
function lessThan(a: number, b: number): number {
  return (a - b) >> 31;
}

/** a when mask is -1, b when mask is 0. */
function select(mask: number, a: number, b: number): number {
  return (a & mask) | (b & ~mask);
}

/** The smallest 2^n - 1 ≥ x (x is public: derived from the key size). */
function allOnesAtLeast(x: number): number {
  let m = 0;
  while (m < x) m = (m << 1) | 1;
  return m;
}
