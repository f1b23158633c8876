/** Small validators shared by the domain services. */

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

/** True for an assigned ISO 3166-1 alpha-2 code (as ICU knows them). */
export function isCountryCode(value: string): boolean {
  if (!/^[A-Z]{2}$/.test(value)) return false;
  const name = regionNames.of(value);
  return name !== undefined && name !== value;
}

/** A pragmatic e-mail check: one @, no spaces, a dot in the domain. */
export function isEmail(value: string): boolean {
  return value.length <= 320 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value);
}

export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}
