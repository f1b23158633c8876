import type { EntityMetadata, EntityProperty } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';

interface Column {
  prop: string;
  alias: string;
  kind: 'value' | 'date' | 'reference';
  /** For references: the prototype of the entity referred to. */
  targetPk?: string;
}

/**
 * Reads an entity from the columns of a hand-written SELECT (a hot path's prepared statement)
 * as MikroORM would have hydrated it, without the entity manager: every persisted scalar
 * property by the entity's own metadata (so the column list follows the entities), timestamps
 * parsed as MikroORM parses them, and many-to-one relations as references holding only their
 * id (the caller puts loaded relations in place). The objects are plain (typed as the entity):
 * read them, never persist them.
 */
export class EntityRowMapper<T extends object> {
  /** `alias.column as "alias__column", …` for the SELECT list. */
  readonly selectList: string;
  private readonly columns: Column[];
  private readonly pkAlias: string;
  private readonly parseDate: (value: string) => Date;

  constructor(
    orm: MikroORM,
    entity: new () => T,
    readonly alias: string,
  ) {
    const metadata = orm.getMetadata();
    const meta = metadata.find(entity.name) as EntityMetadata<T>;
    if (!meta) throw new Error(`no metadata for ${entity.name}`);
    const platform = orm.em.getPlatform();
    this.parseDate = (value) => platform.parseDate(value) as Date;
    this.columns = [];
    for (const prop of meta.props as EntityProperty<T>[]) {
      if (prop.persist === false || prop.lazy || prop.fieldNames?.length !== 1) continue;
      const field = prop.fieldNames[0]!;
      const aliasName = `${alias}__${field}`;
      if (prop.kind === 'scalar') {
        this.columns.push({ prop: prop.name, alias: aliasName, kind: prop.runtimeType === 'Date' ? 'date' : 'value' });
      } else if (prop.kind === 'm:1') {
        const target = metadata.find(prop.type) as EntityMetadata;
        this.columns.push({ prop: prop.name, alias: aliasName, kind: 'reference', targetPk: target.primaryKeys[0] as string });
      }
    }
    const pk = this.columns.find((c) => c.prop === meta.primaryKeys[0]);
    if (!pk) throw new Error(`${entity.name}: no primary key column`);
    this.pkAlias = pk.alias;
    this.selectList = this.columns.map((c) => `${alias}.${c.alias.slice(alias.length + 2)} as "${c.alias}"`).join(', ');
  }

  /** The entity of `row`, or null when its columns are all null (a left join that found nothing). */
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
