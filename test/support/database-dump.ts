import { Client } from 'pg';

/**
 * Every row of every table in `url`'s database as text, one line a row, each line
 * `schema.table<TAB>(value,value,...)` in PostgreSQL's row literal form: what a data-only dump
 * holds, made with SQL alone so that no client tool (pg_dump) has to be installed.
 */
export async function dumpAllRows(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ schema: string; name: string }>(
      `select table_schema as schema, table_name as name from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
        order by 1, 2`,
    );
    const lines: string[] = [];
    for (const { schema, name } of tables) {
      const qualified = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(name)}`;
      const { rows } = await client.query<{ row: string }>(`select t::text as row from ${qualified} t`);
      for (const { row } of rows) lines.push(`${schema}.${name}\t${row}`);
    }
    return lines.join('\n');
  } finally {
    await client.end();
  }
}
