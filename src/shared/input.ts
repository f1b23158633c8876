import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { DomainError, requiredField, unstorableIn, validationError } from './errors';

/** A non-empty trimmed string, or null for anything else (absent, blank, not a string). */
export function trimmedText(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

/** A text field as read by a schema (a string, or a number legacy clients send for it): its text, or null when absent. */
export function textOf(v: string | number | undefined): string | null {
  if (v === undefined) return null;
  return typeof v === 'number' ? String(v) : v;
}

/**
 * Reading request objects whose property names are matched case-insensitively, as legacy
 * clients send them in several casings: `RedirectUrl`, `redirectUrl` and `redirecturl` are one field. A field given
 * twice in different casings is refused rather than guessed.
 */
export class InputObject {
  private readonly byName = new Map<string, [string, unknown]>();

  constructor(value: Record<string, unknown>) {
    for (const [key, v] of Object.entries(value)) {
      const lower = key.toLowerCase();
      if (this.byName.has(lower)) throw validationError(`The ${key} field is given more than once.`);
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

  /**
   * Refuses properties the reader does not know ("<Field> is currently not supported."): for the
   * service's own payloads (GraphQL's encrypted card part, the checkout page). The REST shim
   * ignores unknown properties instead, as legacy clients expect (see readInput).
   */
  allowOnly(names: readonly string[]): this {
    const allowed = new Set(names.map((n) => n.toLowerCase()));
    for (const [lower, [original]] of this.byName) {
      if (!allowed.has(lower)) throw new DomainError('unsupported', `${original} is currently not supported.`, 'VAL400');
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
    else throw validationError(`The ${name} field must be a string.`);
    if (s === '') return null;
    if (unstorableIn(s)) throw validationError(`The ${name} field is not valid.`);
    if (s.length > maxLength) throw validationError(`The ${name} field must be at most ${maxLength} characters.`);
    return s;
  }

  optionalObject(name: string): InputObject | null {
    const v = this.raw(name);
    if (v === undefined || v === null) return null;
    if (typeof v !== 'object' || Array.isArray(v)) throw validationError(`The ${name} field must be an object.`);
    return new InputObject(v as Record<string, unknown>);
  }
}

// ---- schema-driven reading of request bodies and decrypted plaintexts --------------------

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  maxLength?: number;
  'x-aliases'?: string[];
  'x-required-message'?: string;
};

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/**
 * Reads a request body or decrypted plaintext by its schema, the way legacy clients send them:
 * property names are matched case-insensitively (and by the aliases a schema lists under
 * `x-aliases`) and renamed to the schema's names; a property that is `null`, an empty string or
 * only whitespace counts as absent; unknown properties are dropped. The result is then checked against the schema, and the first
 * problem is answered with the legacy interface's message (`The <Field> field is required.`).
 * `label` names the whole value in messages.
 */
export function readInput<T extends TSchema>(schema: T, value: unknown, label = 'request body'): Static<T> {
  const canonical = canonicalise(schema, value);
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (check.Check(canonical)) return canonical as Static<T>;
  throw inputError(check.Errors(canonical).First()!, label);
}

/** An object schema's property names by their lower-case names and aliases: built once per schema (schemas are constants). */
const namesBySchema = new WeakMap<object, Map<string, string>>();
function namesOf(s: JsonSchema): Map<string, string> {
  let byName = namesBySchema.get(s);
  if (!byName) {
    byName = new Map<string, string>();
    for (const [name, property] of Object.entries(s.properties!)) {
      byName.set(name.toLowerCase(), name);
      for (const alias of property['x-aliases'] ?? []) byName.set(alias.toLowerCase(), name);
    }
    namesBySchema.set(s, byName);
  }
  return byName;
}

/** Renames keys to the schema's names, drops absent values (null, blank text) and unknown keys, refuses NUL in text; see readInput. */
export function canonicalise(schema: TSchema, value: unknown, path: string[] = []): unknown {
  const s = schema as JsonSchema;
  if (s.properties && isPlainObject(value)) {
    const byName = namesOf(s);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (isAbsent(v)) continue;
      const name = byName.get(key.toLowerCase());
      if (name === undefined) continue;
      if (Object.hasOwn(out, name)) throw validationError(`The ${fieldLabel(name)} field is given more than once.`);
      out[name] = canonicalise(s.properties[name] as TSchema, v, [...path, name]);
    }
    return out;
  }
  if (s.anyOf) {
    const objectBranch = s.anyOf.find((b) => b.properties);
    if (objectBranch && isPlainObject(value)) return canonicalise(objectBranch as TSchema, value, path);
  }
  if (typeof value === 'string' && unstorableIn(value) && acceptsString(s)) {
    throw validationError(`The ${fieldLabel(path[path.length - 1] ?? 'request')} field is not valid.`);
  }
  return value;
}

/** What legacy clients send for a field they leave out: null, or an empty (or blank) string. */
function isAbsent(v: unknown): boolean {
  return v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function acceptsString(s: JsonSchema): boolean {
  return s.type === 'string' || (s.anyOf ?? []).some((b) => b.type === 'string');
}

/** Messages name a field by its schema name with a capital initial, as the legacy service does (`The Firstname field …`). */
function fieldLabel(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function inputError(e: ValueError, label: string): DomainError {
  const segments = e.path.split('/').filter(Boolean);
  const name = segments[segments.length - 1];
  const s = e.schema as JsonSchema;
  if (name === undefined) return validationError(`The ${label} must be a JSON object.`);
  const field = fieldLabel(name);
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return s['x-required-message'] ? validationError(s['x-required-message']) : requiredField(field);
    case ValueErrorType.StringMaxLength:
      return validationError(`The ${field} field must be at most ${s.maxLength} characters.`);
    case ValueErrorType.Object:
      return validationError(`The ${field} field must be an object.`);
    case ValueErrorType.Union: {
      // A value of a type one branch accepts (a string too long, say): report that branch's problem.
      const branch = (s.anyOf ?? []).findIndex((b) => jsonTypeOf(e.value) === (b.type === 'integer' ? 'number' : b.type));
      const inner = branch >= 0 ? e.errors[branch]?.First() : undefined;
      if (inner) return inputError(inner, label);
      return typeError(s, field);
    }
    case ValueErrorType.String:
    case ValueErrorType.Number:
    case ValueErrorType.Integer:
      return typeError(s, field);
    default:
      return validationError(`The ${field} field is not valid.`);
  }
}

/** "must be a string" for text fields (a number is also taken), "must be a number" for numeric ones. */
function typeError(s: JsonSchema, field: string): DomainError {
  const expected = s.anyOf?.[0]?.type ?? s.type;
  if (expected === 'string') return validationError(`The ${field} field must be a string.`);
  if (expected === 'number' || expected === 'integer') return validationError(`The ${field} field must be a number.`);
  if (expected === 'object') return validationError(`The ${field} field must be an object.`);
  return validationError(`The ${field} field is not valid.`);
}

function jsonTypeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
