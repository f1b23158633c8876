import { DomainError } from './errors';

/**
 * Countries whose customers the gateway accepts, with their ISO 3166-1 numeric code (the
 * `countryId` of the legacy interface). Others are refused with code 100 (COUNTRY_NOT_SUPPORTED).
 */
export const SUPPORTED_COUNTRIES: Readonly<Record<string, number>> = {
  NG: 566,
  GH: 288,
  KE: 404,
  ZA: 710,
  EG: 818,
  MA: 504,
  SN: 686,
  CI: 384,
  CM: 120,
  UG: 800,
  TZ: 834,
  RW: 646,
  ZM: 894,
  BJ: 204,
  TG: 768,
  GB: 826,
  IE: 372,
  FR: 250,
  DE: 276,
  NL: 528,
  BE: 56,
  ES: 724,
  IT: 380,
  PT: 620,
  SE: 752,
  NO: 578,
  DK: 208,
  FI: 246,
  CH: 756,
  AT: 40,
  PL: 616,
  US: 840,
  CA: 124,
  BR: 76,
  MX: 484,
  AE: 784,
  SA: 682,
  IN: 356,
  CN: 156,
  JP: 392,
  SG: 702,
  AU: 36,
  NZ: 554,
};

export function countryIdOf(code: string): number | undefined {
  return Object.prototype.hasOwnProperty.call(SUPPORTED_COUNTRIES, code) ? SUPPORTED_COUNTRIES[code] : undefined;
}

/** The code-100 message, word for word as the legacy interface answers it (no trailing period). */
export const COUNTRY_NOT_SUPPORTED = 'Customer country is currently not supported';

/** The countryId of a customer's country (ISO-2, upper case); any other country is refused with code 100. */
export function requireSupportedCountry(code: string): number {
  const id = countryIdOf(code);
  if (id === undefined) throw new DomainError('unsupported', COUNTRY_NOT_SUPPORTED, '100');
  return id;
}
