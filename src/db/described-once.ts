import { Query } from 'pg';
import type { PreparedStatement, Row } from './sql';

/**
 * A named prepared statement run without asking the server to describe its rows again.
 *
 * node-postgres sends Bind, Describe (portal), Execute, Sync for every execution of a named
 * statement, so the server answers every time with the row description (for a 70-column read,
 * about 2 KB, more than the row itself), and the driver parses it and rebuilds a parser per
 * column. The description of a named statement cannot change while it stays prepared on a
 * connection (PostgreSQL refuses to run it with "cached plan must not change result type"
 * rather than answer other columns), so it is kept per connection and statement name after the
 * first execution, and later executions send Bind, Execute, Sync only.
 *
 * This leans on three members of the driver's Query and Result that are not in its typings
 * (`prepare`, `_getRows`, the Result's `fields`, `_parsers`, `_prebuiltEmptyResultObject`);
 * `test/integration/db/described-once.test.ts` fails when an upgrade of `pg` moves them.
 */

interface Description {
  fields: unknown[];
  parsers: unknown[];
  empty: Row;
}

interface PgConnection {
  parsedStatements: Record<string, string>;
  bind(config: unknown): void;
}

interface QueryInternals {
  name: string;
  text: string;
  values: unknown[];
  portal: string;
  binary: boolean | undefined;
  rows: number | undefined;
  _accumulateRows: boolean;
  _result: { fields: unknown[]; _parsers: unknown[] | undefined; _prebuiltEmptyResultObject: Row | null };
  handleError(err: unknown, connection: unknown): void;
  _getRows(connection: unknown, rows: number | undefined): void;
}

/** Per connection (the driver's, one per pooled client): the row description of each statement name run on it. */
const descriptions = new WeakMap<object, Map<string, Description>>();

const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

class DescribedOnceQuery extends (Query as unknown as new (
  config: object,
) => QueryInternals & { prepare(connection: unknown): void; handleRowDescription(msg: unknown): void }) {
  private connection: object | null = null;

  override prepare(connection: PgConnection): void {
    this.connection = connection;
    const known = connection.parsedStatements[this.name] === this.text ? descriptions.get(connection)?.get(this.name) : undefined;
    if (!known) {
      super.prepare(connection);
      return;
    }
    try {
      connection.bind({ portal: this.portal, statement: this.name, values: this.values, binary: this.binary, valueMapper: prepareValue });
    } catch (err) {
      this.handleError(err, connection);
      return;
    }
    const result = this._result;
    result.fields = known.fields;
    result._parsers = known.parsers;
    result._prebuiltEmptyResultObject = known.empty;
    // What handleRowDescription decides when the description arrives: a callback is always given here.
    this._accumulateRows = true;
    this._getRows(connection, this.rows);
  }

  override handleRowDescription(msg: unknown): void {
    super.handleRowDescription(msg);
    if (!this.connection) return;
    let known = descriptions.get(this.connection);
    if (!known) descriptions.set(this.connection, (known = new Map()));
    const result = this._result;
    known.set(this.name, { fields: result.fields, parsers: result._parsers ?? [], empty: result._prebuiltEmptyResultObject ?? {} });
  }
}

/** The pg client's `query` as far as a submittable goes. */
interface SubmittableClient {
  query(submittable: object): unknown;
}

/** Runs `statement` on `client` (a pooled pg client) with `values`; answers its rows. */
export function runDescribedOnce(client: SubmittableClient, statement: PreparedStatement, values: unknown[]): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const query = new DescribedOnceQuery({
      name: statement.name,
      text: statement.text,
      values,
      callback: (err: Error | null, result: { rows: Row[] }) => (err ? reject(err) : resolve(result.rows)),
    });
    client.query(query);
  });
}
