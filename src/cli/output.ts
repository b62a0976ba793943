/**
 * What a CLI command prints: a table or a record for people, the answer as JSON with `--json` for scripts.
 * Stdout carries only the result; messages (done, progress, the next page) go to stderr.
 */

export type Show =
  /** Rows in columns; `more` says how to get the next page when there is one. */
  | { kind: 'table'; rows: (result: never) => Record<string, unknown>[]; columns: string[]; more?: (result: never) => string | undefined }
  /** One object, a field a line. */
  | { kind: 'record' }
  /**
   * JSON even without `--json`: what `env create` and `keys create` print is fixed by the contract, and it
   * holds a secret key shown only once, which scripts read from it.
   */
  | { kind: 'json' }
  /** Nothing to show but a sentence on stderr. */
  | { kind: 'done'; message: string };

const MAX_CELL = 60;

/** A value as a cell: text as is, lists joined, objects as compact JSON, cut to a width a terminal holds. */
function cell(value: unknown): string {
  const text = value === null || value === undefined ? '' : Array.isArray(value) && value.every((v) => typeof v !== 'object')
    ? value.join(', ') : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n');
}

/** A record a field a line; nested objects as indented JSON so nothing is cut. */
function record(value: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(value).map((k) => k.length));
  return Object.entries(value).map(([key, v]) =>
    `${`${key}:`.padEnd(width + 2)}${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`).join('\n');
}

export function print(result: unknown, show: Show, json: boolean) {
  if (show.kind === 'done') return void process.stderr.write(`${show.message}\n`);
  if (json || show.kind === 'json') return void process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (show.kind === 'record') return void process.stdout.write(`${record(result as Record<string, unknown>)}\n`);
  process.stdout.write(`${table(show.rows(result as never), show.columns)}\n`);
  const more = show.more?.(result as never);
  if (more) process.stderr.write(`${more}\n`);
}
