// `npm run check:migrations` (CI runs it beside the lint): the rolling-upgrade rule of docs/operations.md
// ("Upgrades"). During a rolling upgrade the processes of the previous version keep serving on the schema
// the new version's migrations made, so a migration may only expand what they use: new tables, nullable
// columns or columns with a default, indexes, new functions. A statement that removes, renames, retypes or
// tightens what an old process reads or writes, changes rows behind its back, or rewrites a table under an
// exclusive lock fails this check unless a comment above it (or inside it) says why old processes are not
// affected:  -- rolling-upgrade: <the reason>
// A note that starts "offline:" gives the reason the statement needs them stopped first instead; the summary
// names those migrations, and docs/operations.md must too.
//
// Usage: node scripts/check-migrations.js [directory or .sql file ...]   (default: migrations/)
// Exit codes: 0 every statement passes, 1 a statement needs a reason, 2 a directory cannot be read.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const NOTE = /^--\s*rolling-upgrade:\s*(.*)$/;
/** A note that starts "offline:" says the opposite: this statement needs the previous version's processes stopped first. */
const OFFLINE = /^offline:\s*/;
/** A reason has to say something: "ok" or "safe" is not one. */
const MIN_REASON = 20;

/**
 * Splits SQL into statements at top-level semicolons. Comments, quoted strings, quoted identifiers and
 * dollar-quoted bodies (functions, DO blocks) are read whole, so a semicolon or a keyword inside them
 * neither ends a statement nor counts as one. Each statement has its tokens (words lower-cased, a
 * string as "'…'", a dollar body as "$…$"), the line it starts on and the comments before and inside it.
 */
export function splitStatements(text) {
  const statements = [];
  let current = newStatement();
  let i = 0;
  let line = 1;
  const advance = (to) => {
    for (let k = i; k < to; k++) if (text[k] === '\n') line++;
    i = to;
  };
  const push = (token) => {
    if (current.tokens.length === 0) current.line = line;
    current.tokens.push(token);
  };
  while (i < text.length) {
    const c = text[i];
    const rest = text.slice(i);
    if (/\s/.test(c)) { advance(i + 1); continue; }
    if (rest.startsWith('--')) {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      current.comments.push(text.slice(i, stop).trim());
      advance(stop);
      continue;
    }
    if (rest.startsWith('/*')) { advance(blockCommentEnd(text, i)); continue; }
    if (c === ';') {
      if (current.tokens.length > 0) statements.push(current);
      current = newStatement();
      advance(i + 1);
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(rest)?.[0];
    if (word && /^[eE]$/.test(word) && text[i + 1] === "'") { push("'…'"); advance(quotedEnd(text, i + 1, "'", true)); continue; }
    if (word) { push(word.toLowerCase()); advance(i + word.length); continue; }
    if (c === "'") { push("'…'"); advance(quotedEnd(text, i, "'", false)); continue; }
    if (c === '"') {
      const end = quotedEnd(text, i, '"', false);
      push(text.slice(i + 1, end - 1).replace(/""/g, '"').toLowerCase());
      advance(end);
      continue;
    }
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(rest)?.[0];
    if (tag) {
      const close = text.indexOf(tag, i + tag.length);
      if (close === -1) throw new SyntaxError(`line ${line}: the dollar-quoted body opened with ${tag} is never closed`);
      push('$…$');
      advance(close + tag.length);
      continue;
    }
    push(/^[0-9.]+/.exec(rest)?.[0] ?? c);
    advance(i + (/^[0-9.]+/.exec(rest)?.[0].length ?? 1));
  }
  if (current.tokens.length > 0) statements.push(current);
  return statements;
}

const newStatement = () => ({ tokens: [], comments: [], line: 0 });

/** Where a block comment that starts at `start` ends (block comments nest in PostgreSQL). */
function blockCommentEnd(text, start) {
  let depth = 0;
  for (let k = start; k < text.length - 1; k++) {
    if (text[k] === '/' && text[k + 1] === '*') { depth++; k++; } else if (text[k] === '*' && text[k + 1] === '/') {
      depth--;
      k++;
      if (depth === 0) return k + 1;
    }
  }
  throw new SyntaxError('a block comment is never closed');
}

/** Where a quoted string or identifier that opens at `start` ends: a doubled quote is one quote; E'' strings also escape with \. */
function quotedEnd(text, start, quote, backslashes) {
  for (let k = start + 1; k < text.length; k++) {
    if (backslashes && text[k] === '\\') { k++; continue; }
    if (text[k] === quote) {
      if (text[k + 1] === quote) { k++; continue; }
      return k + 1;
    }
  }
  throw new SyntaxError(`a ${quote === "'" ? 'string' : 'quoted identifier'} is never closed`);
}

/** The parts of `tokens` between commas outside parentheses (the actions of one ALTER TABLE). */
function topLevelParts(tokens) {
  const parts = [[]];
  let depth = 0;
  for (const token of tokens) {
    if (token === '(') depth++;
    if (token === ')') depth--;
    if (token === ',' && depth === 0) parts.push([]); else parts.at(-1).push(token);
  }
  return parts.map((part) => part.join(' '));
}

/** A table or function name without its schema. */
const bare = (name) => name.split('.').at(-1);

/** The name that follows `pattern` in a statement's text (`create table if not exists public.x` → x). */
function nameAfter(sql, pattern) {
  const match = new RegExp(`^${pattern}\\s+(?<name>[a-z_][a-z0-9_$]*(?:\\s*\\.\\s*[a-z_][a-z0-9_$]*)?)`).exec(sql);
  return match && bare(match.groups.name.replace(/\s/g, ''));
}

const VOLATILE_DEFAULT = /\bdefault\b.*\b(gen_random_uuid|uuid_generate_v[14]|random|clock_timestamp|timeofday|nextval)\s*\(/;

/** What one action of an ALTER TABLE does that old processes could notice, or undefined. */
function alterTableAction(action) {
  if (/^rename\b/.test(action) || /^set schema\b/.test(action)) return 'renames what the previous version names';
  if (/^drop constraint\b/.test(action)) return 'drops a constraint (a unique one may back an ON CONFLICT of the previous version)';
  if (/^drop\b/.test(action)) return 'drops a column the previous version may read or write';
  if (/^alter (column )?\S+ (set data )?type\b/.test(action)) return 'changes a column type (a table rewrite under an exclusive lock, and values the previous version may not read)';
  if (/^alter (column )?\S+ set not null\b/.test(action)) return "adds NOT NULL (the previous version's inserts may leave the column empty)";
  if (/^alter (column )?\S+ drop not null\b/.test(action)) return 'allows NULL where the previous version reads a value';
  if (/^alter (column )?\S+ drop default\b/.test(action)) return "drops a default the previous version's inserts may rely on";
  if (/^add (constraint \S+ )?(check|foreign key|unique|primary key|exclude)\b/.test(action)) return "adds a constraint the previous version's writes must satisfy";
  if (/^add\b/.test(action)) return addColumn(action);
  if (/^(enable|disable)\b.*\btrigger\b/.test(action)) return "turns a trigger on or off under the previous version's writes";
  if (/^set (logged|unlogged)\b/.test(action)) return 'rewrites the table under an exclusive lock';
  return undefined;
}

function addColumn(action) {
  if (/\bgenerated\b/.test(action)) return 'adds a generated or identity column (a table rewrite under an exclusive lock)';
  if (VOLATILE_DEFAULT.test(action)) return 'adds a column with a volatile default (a table rewrite under an exclusive lock)';
  if (/\bnot null\b/.test(action) && !/\bdefault\b/.test(action)) return "adds a NOT NULL column without a default (the previous version's inserts fail)";
  return undefined;
}

/**
 * Why a statement is unsafe beside old processes, or undefined. `created` holds the tables and functions
 * this migration itself makes, which no old process uses yet.
 */
export function unsafeBecause(tokens, created) {
  const sql = tokens.join(' ');
  const onExisting = (pattern) => {
    const table = nameAfter(sql, pattern);
    return table !== null && !created.has(table);
  };
  if (/^alter table\b/.test(sql)) {
    const rest = sql.replace(/^alter table (if exists )?(only )?\S+( \. \S+)? /, '');
    const reasons = topLevelParts(rest.split(' ')).map(alterTableAction).filter(Boolean);
    return reasons.length > 0 ? [...new Set(reasons)].join('; ') : undefined;
  }
  if (/^alter \S+( view)? .*\brename\b/.test(sql) || /^alter \S+( view)? .*\bset schema\b/.test(sql)) return 'renames what the previous version names';
  if (/^drop\b/.test(sql)) return `drops ${tokens[1] === 'materialized' ? 'a materialized view' : `${/^[aeiou]/.test(tokens[1]) ? 'an' : 'a'} ${tokens[1]}`} the previous version may use`;
  if (/^revoke\b/.test(sql)) return 'takes away privileges the previous version may need';
  if (/^create unique index\b/.test(sql) && onExisting('create unique index( concurrently)?( if not exists)?( \\S+)? on( only)?')) {
    return 'adds a unique index to an existing table (the previous version may write duplicates; the build blocks writes)';
  }
  if (/^create (or replace )?(constraint )?trigger\b/.test(sql) && onExisting('create( or replace)?( constraint)? trigger \\S+ .*?\\bon')) {
    return "adds a trigger that runs on the previous version's writes";
  }
  if (/^create or replace (function|procedure)\b/.test(sql) && !created.has(nameAfter(sql, 'create or replace (function|procedure)'))) {
    return 'replaces a function the previous version runs (directly or through a trigger)';
  }
  if (/^create or replace (materialized )?view\b/.test(sql)) return 'replaces a view the previous version may read';
  if (/^(update|delete|truncate|merge)\b/.test(sql)) {
    const table = nameAfter(sql, '(update|delete from|truncate( table)?|merge into)( only)?');
    if (table === null || !created.has(table)) return 'changes existing rows while the previous version keeps writing them the old way';
  }
  if (/^insert into\b/.test(sql) && /\bselect\b/.test(sql)) return 'copies existing rows (a backfill) while the previous version keeps writing them the old way';
  if (/^with\b/.test(sql) && /\b(insert|update|delete)\b/.test(sql)) return 'changes rows while the previous version keeps writing them the old way';
  if (/^do\b/.test(sql)) return 'runs a DO block, whose statements this check cannot judge';
  if (/^(cluster|reindex|vacuum full|refresh materialized view)\b/.test(sql) && !/\bconcurrently\b/.test(sql)) return 'holds an exclusive lock for the whole rewrite';
  return undefined;
}

/** Tables and functions a statement creates. */
function creates(tokens) {
  const sql = tokens.join(' ');
  return nameAfter(sql, 'create( unlogged| temporary| temp)? table( if not exists)?')
    ?? nameAfter(sql, 'create( or replace)? (function|procedure)');
}

/** The verdict on one statement: undefined when it passes, else why not. */
function verdict(reason, notes) {
  if (!reason) return notes.length > 0 ? 'a rolling-upgrade note on a statement this check finds safe: put it above the statement it is about' : undefined;
  if (notes.length === 0) {
    return `${reason}: make it safe (expand now, contract in a later release), or say why old processes are not affected in a comment above it: -- rolling-upgrade: <reason>`;
  }
  if (notes.every((n) => n.replace(OFFLINE, '').trim().length < MIN_REASON)) return `${reason}: the rolling-upgrade note must give the reason (at least ${MIN_REASON} characters)`;
  return undefined;
}

/**
 * The findings of one migration (statements without a reason, notes without one or on a safe statement),
 * how many statements carry a note, and whether one of them says the previous version must be stopped first.
 */
export function checkMigration(text) {
  const created = new Set();
  const result = { findings: [], noted: 0, offline: false };
  for (const statement of splitStatements(text)) {
    const reason = unsafeBecause(statement.tokens, created);
    const notes = statement.comments.map((c) => NOTE.exec(c)?.[1]).filter((n) => n !== undefined);
    const made = creates(statement.tokens);
    if (made) created.add(made);
    const message = verdict(reason, notes);
    if (message) result.findings.push({ line: statement.line, message });
    else if (reason) result.noted++;
    if (reason && notes.some((n) => OFFLINE.test(n))) result.offline = true;
  }
  return result;
}

/** The migration files named: .sql files as they are, directories by their numbered migrations. */
function migrationFiles(paths) {
  return paths.flatMap((path) => (path.endsWith('.sql') ? [path]
    : readdirSync(path).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort().map((f) => join(path, f))));
}

function checkFile(file) {
  try {
    return checkMigration(readFileSync(file, 'utf8'));
  } catch (err) {
    return { findings: [{ line: 0, message: `cannot be read as SQL: ${err.message}` }], noted: 0, offline: false };
  }
}

/** Checks the migrations; prints each finding as file:line, or a summary naming the offline ones; answers the exit code. */
export function main(paths) {
  let files;
  try {
    files = migrationFiles(paths);
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  const results = files.map((file) => ({ file: relative(process.cwd(), file), ...checkFile(file) }));
  const findings = results.flatMap((r) => r.findings.map((f) => `${r.file}:${f.line}: ${f.message}`));
  if (findings.length > 0) {
    process.stderr.write(`${findings.join('\n')}\n${findings.length} statement(s) break the rolling-upgrade rule (docs/operations.md, "Upgrades").\n`);
    return 1;
  }
  const noted = results.reduce((sum, r) => sum + r.noted, 0);
  const offline = results.filter((r) => r.offline).map((r) => basename(r.file));
  process.stdout.write(`${files.length} migrations follow the rolling-upgrade rule; ${noted} statement(s) carry a rolling-upgrade note.\n`
    + `Offline (stop the previous version's processes before they run): ${offline.join(', ') || 'none'}.\n`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  process.exitCode = main(args.length > 0 ? args : [fileURLToPath(new URL('../migrations/', import.meta.url))]);
}
