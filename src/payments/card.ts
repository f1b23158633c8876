/** Card rules that need nothing but the number: Luhn, brand, what may be kept of it. */

export function luhnValid(number: string): boolean {
  // 13 to 19 digits: with fewer, first six and last four would reveal nearly the whole number.
  if (!/^\d{13,19}$/.test(number)) return false;
  let sum = 0;
  let double = false;
  for (let i = number.length - 1; i >= 0; i--) {
    let d = number.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

export function cardBrand(number: string): string {
  if (/^(506(0|1)|507[89]|6500)/.test(number)) return 'Verve';
  if (/^4/.test(number)) return 'Visa';
  if (/^(5[1-5]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720)/.test(number)) return 'Mastercard';
  if (/^3[47]/.test(number)) return 'American Express';
  if (/^(6011|65|64[4-9])/.test(number)) return 'Discover';
  return 'Unknown';
}

/** The only parts of a card number that are ever kept: first six and last four. */
export function cardFingerprintParts(number: string): { firstSix: string; lastFour: string } {
  return { firstSix: number.slice(0, 6), lastFour: number.slice(-4) };
}
