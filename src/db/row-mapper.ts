import type { EntityMetadata, EntityProperty } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * A chosen set of an entity's columns in a hand-written SELECT: the table's alias in the
 * statement, the column names, and the prefix each is selected under (`alias.column as
 * "prefixcolumn"`), so that several tables' columns share one row without clashing.
 */
export interface RowColumns {
  alias: string;
  columns: readonly string[];
  prefix: string;
}

/** The SELECT list of `chosen`: `alias.column as "prefixcolumn", …` (no database needed). */
export function selectColumns(chosen: RowColumns): string {
  return chosen.columns.map((c) => `${chosen.alias}.${c} as "${chosen.prefix}${c}"`).join(', ');
}

interface Column {
  prop: string;
  alias: string;
  kind: 'value' | 'date' | 'reference';
  /** For references: the primary key of the entity referred to. */
  targetPk?: string;
}

/**
 * Reads an entity from the columns of a hand-written SELECT (a hot path's prepared statement,
 * a list page) as MikroORM would have hydrated it, without the entity manager: the properties
 * by the entity's own metadata, timestamps parsed as MikroORM parses them, and many-to-one
 * relations as references holding only their id (the caller puts loaded relations in place).
 * Given a table alias, it reads every persisted column, each selected as `alias__column`; given
 * `RowColumns`, only the chosen columns (an unknown one fails here, at start-up). The objects
 * are plain (typed as the entity): read them, never persist them.
 */
export class EntityRowMapper<T extends object> {
  /** The SELECT list of the columns this mapper reads. */
  readonly selectList: string;
  private readonly columns: Column[];
  private readonly pkAlias: string;
  private readonly parseDate: (value: string) => Date;

  constructor(orm: MikroORM, entity: new () => T, alias: string | RowColumns) {
    const metadata = orm.getMetadata();
    const meta = metadata.find(entity.name) as EntityMetadata<T>;
    if (!meta) throw new Error(`no metadata for ${entity.name}`);
    const platform = orm.em.getPlatform();
    this.parseDate = (value) => platform.parseDate(value) as Date;
    const byField = new Map<string, EntityProperty<T>>();
    for (const prop of meta.props as EntityProperty<T>[]) {
      if (prop.persist === false || prop.lazy || prop.fieldNames?.length !== 1) continue;
      if (prop.kind === 'scalar' || prop.kind === 'm:1') byField.set(prop.fieldNames[0]!, prop);
    }
    const chosen: RowColumns = typeof alias === 'string' ? { alias, columns: [...byField.keys()], prefix: `${alias}__` } : alias;
    this.columns = chosen.columns.map((field) => {
      const prop = byField.get(field);
      if (!prop) throw new Error(`${entity.name}: no column ${field}`);
      const columnAlias = `${chosen.prefix}${field}`;
      if (prop.kind === 'scalar') return { prop: prop.name, alias: columnAlias, kind: prop.runtimeType === 'Date' ? 'date' : 'value' };
      const target = metadata.find(prop.type) as EntityMetadata;
      return { prop: prop.name, alias: columnAlias, kind: 'reference', targetPk: target.primaryKeys[0] as string };
    });
    const pk = this.columns.find((c) => c.prop === meta.primaryKeys[0]);
    if (!pk) throw new Error(`${entity.name}: no primary key column`);
    this.pkAlias = pk.alias;
    this.selectList = selectColumns(chosen);
  }

  /** The entity of `row`, or null when its primary key is null or absent (a left join that found nothing, a table not selected). */
  map(row: Record<string, unknown>): T | null {
    if (row[this.pkAlias] === null || row[this.pkAlias] === undefined) return null;
    // A plain object: assigning through the entity's prototype would run MikroORM's change-tracking setters.
    const entity: Record<string, unknown> = {};
    for (const c of this.columns) {
      const value = row[c.alias];
      if (value === null || value === undefined) entity[c.prop] = null;
      else if (c.kind === 'date') entity[c.prop] = value instanceof Date ? value : this.parseDate(value as string);
      else if (c.kind === 'reference') {
        entity[c.prop] = { [c.targetPk!]: value };
      } else entity[c.prop] = value;
    }
    return entity as T;
  }
}
