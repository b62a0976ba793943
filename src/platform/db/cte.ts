import { sql, type RawBuilder } from 'kysely';
import { onceMoreOnConflict, type Db } from './database.js';

/**
 * A CTE of a statement being built, typed by its rows. A later piece reads it through `from`, never by
 * its name, so pieces written by different domains fit together only where their row shapes do.
 */
export interface Cte<Row> {
  /** The CTE as a table for a later piece's `from`. */
  readonly from: RawBuilder<unknown>;
  /** Carries the row type; never read at run time. */
  readonly rows?: Row;
}

/** Collects the CTEs of one statement in order; each piece adds its own and hands back the ones a later piece reads. */
export interface CteChain {
  add<Row>(name: string, body: RawBuilder<Row>): Cte<Row>;
}

/**
 * Runs `with <the chain's CTEs> select * from <the CTE the build answers>`: one statement, one round trip,
 * and every data-modifying CTE runs whether or not a later one reads it. `head` leads the text (a
 * `preparedAs` mark), so it must not vary with the data: names are the build's, values are parameters.
 */
export async function runChain<Row>(db: Db, head: RawBuilder<unknown>, build: (chain: CteChain) => Cte<Row>): Promise<Row[]> {
  const parts: RawBuilder<unknown>[] = [];
  const names = new Set<string>();
  const chain: CteChain = {
    add<R>(name: string, body: RawBuilder<R>): Cte<R> {
      if (names.has(name)) throw new Error(`CTE "${name}" is already part of this statement`);
      names.add(name);
      parts.push(sql`${sql.id(name)} as (${body})`);
      return { from: sql.table(name) };
    },
  };
  const result = build(chain);
  const statement = sql<Row>`${head} with ${sql.join(parts)} select * from ${result.from}`;
  return (await onceMoreOnConflict(db, () => statement.execute(db))).rows;
}
