import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import { validationError } from '../shared/errors';

@ObjectType('PageInfo', { simpleResolvers: true })
export class PageInfo {
  @Field() hasNextPage!: boolean;
  @Field() hasPreviousPage!: boolean;
  @Field(() => String, { nullable: true }) startCursor!: string | null;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
}

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

/** Keyset cursors over (createdAt desc, id desc): stable while rows are added. */
export interface Cursor {
  createdAt: Date;
  id: number;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.createdAt.toISOString(), c.id])).toString('base64url');
}

export function decodeCursor(value: string): Cursor {
  try {
    const [iso, id] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as [string, number];
    const createdAt = new Date(iso);
    // Years outside 1..9999 decode in JavaScript but not in PostgreSQL (e.g. +275760-09-13).
    if (Number.isNaN(createdAt.getTime()) || createdAt.getUTCFullYear() < 1 || createdAt.getUTCFullYear() > 9999) throw new Error('bad');
    if (!Number.isSafeInteger(id) || id < 0 || id > 2_147_483_647) throw new Error('bad');
    return { createdAt, id };
  } catch {
    throw validationError('The after cursor is not valid.');
  }
}

export function pageSize(first: number | null | undefined): number {
  if (first === null || first === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) throw validationError(`first must be from 0 to ${MAX_PAGE_SIZE}.`);
  return first;
}

/** Builds a page from rows fetched with one extra row beyond `size`. */
export function toPage<T, N>(rows: T[], size: number, hadCursor: boolean, cursorOf: (row: T) => Cursor, toNode: (row: T) => N) {
  const hasNextPage = rows.length > size;
  const pageRows = rows.slice(0, size);
  const edges = pageRows.map((row) => ({ cursor: encodeCursor(cursorOf(row)), node: toNode(row) }));
  return {
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: hadCursor,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}

/** `first` / `after` of every connection. */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true }) first?: number | null;
  @Field(() => String, { nullable: true }) after?: string | null;
}
