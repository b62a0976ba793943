import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler,
  type DatabaseConnection, type Dialect, type Driver, type Kysely, type QueryResult,
} from 'kysely';

/**
 * Kysely dialect for PGlite. PGlite is one in-process connection, so a mutex hands it to one
 * Kysely connection at a time: a transaction never interleaves with another request's queries.
 * (kysely-pglite does the same but pulls in a code-generation CLI we do not need.)
 */
export function pgliteDialect(pg: PGlite): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PGliteDriver(pg),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

class PGliteDriver implements Driver {
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;
  readonly #connection: PGliteConnection;

  constructor(private readonly pg: PGlite) { this.#connection = new PGliteConnection(pg); }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#queue;
    let release!: () => void;
    this.#queue = new Promise<void>((resolve) => { release = resolve; });
    await previous;
    this.#release = release;
    return this.#connection;
  }

  async beginTransaction(conn: DatabaseConnection): Promise<void> { await conn.executeQuery(CompiledQuery.raw('begin')); }
  async commitTransaction(conn: DatabaseConnection): Promise<void> { await conn.executeQuery(CompiledQuery.raw('commit')); }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> { await conn.executeQuery(CompiledQuery.raw('rollback')); }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async destroy(): Promise<void> { await this.pg.close(); }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pg: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // A query without parameters may be a multi-statement script (migrations): exec runs those.
    if (query.parameters.length === 0) {
      const results = await this.pg.exec(query.sql);
      const last = results[results.length - 1];
      return { rows: (last?.rows ?? []) as R[], numAffectedRows: toBigInt(last?.affectedRows) };
    }
    const result = await this.pg.query<R>(query.sql, [...query.parameters]);
    return { rows: result.rows, numAffectedRows: toBigInt(result.affectedRows) };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on PGlite');
  }
}

const toBigInt = (n: number | undefined) => (n === undefined ? undefined : BigInt(n));
