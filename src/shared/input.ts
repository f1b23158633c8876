import { DomainError, requiredField, validationError } from './errors';

/** A non-empty trimmed string, or null for anything else (absent, blank, not a string). */
export function trimmedText(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

/**
 * Reading request objects whose property names are matched case-insensitively (contract
 * section 4): `RedirectUrl`, `redirectUrl` and `redirecturl` are one field. A field given
 * twice in different casings is refused rather than guessed.
 */
export class InputObject {
  private readonly byName = new Map<string, [string, unknown]>();

  constructor(
    value: Record<string, unknown>,
  ) {
    for (const [key, v] of Object.entries(value)) {
      const lower = key.toLowerCase();
      if (this.byName.has(lower)) throw validationError(`The ${this.label(key)} field is given more than once.`);
      this.byName.set(lower, [key, v]);
    }
  }

  static from(value: unknown, label = 'request body'): InputObject {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw validationError(`The ${label} must be a JSON object.`);
    }
    return new InputObject(value as Record<string, unknown>);
  }

  has(name: string): boolean {
    const v = this.raw(name);
    return v !== undefined && v !== null && v !== '';
  }

  raw(name: string): unknown {
    return this.byName.get(name.toLowerCase())?.[1];
  }

  /** Messages name the field alone, as the legacy service does (`The Email field is required.`). */
  label(name: string): string {
    return name;
  }

  /** Refuses properties the endpoint does not know (documented: "<Field> is currently not supported."). */
  allowOnly(names: readonly string[]): this {
    const allowed = new Set(names.map((n) => n.toLowerCase()));
    for (const [lower, [original]] of this.byName) {
      if (!allowed.has(lower)) throw new DomainError('unsupported', `${this.label(original)} is currently not supported.`, 'VAL400');
    }
    return this;
  }

  /** A string field; numbers are accepted and read as their text (legacy clients send both). */
  optionalString(name: string, maxLength = 500): string | null {
    const v = this.raw(name);
    if (v === undefined || v === null) return null;
    let s: string;
    if (typeof v === 'string') s = v.trim();
    else if (typeof v === 'number' && Number.isFinite(v)) s = String(v);
    else throw validationError(`The ${this.label(name)} field must be a string.`);
    if (s === '') return null;
    if (s.includes('\u0000')) throw validationError(`The ${this.label(name)} field is not valid.`);
    if (s.length > maxLength) throw validationError(`The ${this.label(name)} field must be at most ${maxLength} characters.`);
    return s;
  }

  requiredString(name: string, maxLength = 500): string {
    const s = this.optionalString(name, maxLength);
    if (s === null) throw requiredField(this.label(name));
    return s;
  }

  optionalObject(name: string): InputObject | null {
    const v = this.raw(name);
    if (v === undefined || v === null) return null;
    if (typeof v !== 'object' || Array.isArray(v)) throw validationError(`The ${this.label(name)} field must be an object.`);
    return new InputObject(v as Record<string, unknown>);
  }

  requiredObject(name: string): InputObject {
    const o = this.optionalObject(name);
    if (!o) throw requiredField(this.label(name));
    return o;
  }
}
