import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * A reader of our own Dockerfile and .dockerignore, for building the image's layout without Docker
 * (test/operations/container-layout.test.ts). It knows the instructions and forms the Dockerfile uses and
 * throws on anything else, so a new instruction cannot be silently left out of the layout the test builds.
 */

export interface Instruction {
  keyword: string;
  /** Leading `--name=value` options (COPY --from, RUN --mount, HEALTHCHECK --interval). */
  flags: Record<string, string>;
  /** The rest of the instruction, as written. */
  args: string;
  line: number;
}

export interface Stage {
  name: string | undefined;
  image: string;
  instructions: Instruction[];
}

const KNOWN = new Set(['FROM', 'ARG', 'WORKDIR', 'COPY', 'RUN', 'ENV', 'VOLUME', 'USER', 'EXPOSE', 'HEALTHCHECK', 'CMD']);

/** The instructions of each line, continuation lines (`\`) joined and comments dropped, as Docker reads them. */
function logicalLines(text: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    if (/^\s*#/.test(raw)) return;
    const continued = raw.endsWith('\\');
    const part = continued ? raw.slice(0, -1) : raw;
    pending = pending ? { ...pending, text: `${pending.text} ${part.trim()}` } : { text: part.trim(), line: index + 1 };
    if (continued) return;
    if (pending.text !== '') lines.push(pending);
    pending = undefined;
  });
  return lines;
}

function instruction({ text, line }: { text: string; line: number }): Instruction {
  const [, keyword, rest] = /^(\S+)\s*(.*)$/.exec(text)!;
  if (!KNOWN.has(keyword!.toUpperCase())) throw new Error(`Dockerfile line ${line}: ${keyword} is not an instruction the layout test knows`);
  const flags: Record<string, string> = {};
  let args = rest!;
  for (let flag = /^--([a-z-]+)=(\S+)\s+/.exec(args); flag; flag = /^--([a-z-]+)=(\S+)\s+/.exec(args)) {
    flags[flag[1]!] = flag[2]!;
    args = args.slice(flag[0].length);
  }
  return { keyword: keyword!.toUpperCase(), flags, args, line };
}

/** The stages of a Dockerfile, in order, each with its instructions (the ARGs before the first FROM are dropped). */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const each of logicalLines(text).map(instruction)) {
    if (each.keyword === 'FROM') {
      const [, image, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(each.args) ?? [];
      if (!image) throw new Error(`Dockerfile line ${each.line}: FROM ${each.args} is not "FROM image [AS name]"`);
      stages.push({ image, name, instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push(each);
    } else if (each.keyword !== 'ARG') {
      throw new Error(`Dockerfile line ${each.line}: ${each.keyword} before the first FROM`);
    }
  }
  return stages;
}

/** An instruction's exec form (`["node", "..."]`): the shell form is refused, as it would run through /bin/sh. */
export function execForm({ args, line }: Pick<Instruction, 'args' | 'line'>): string[] {
  const argv: unknown = JSON.parse(args);
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((arg) => typeof arg === 'string')) {
    throw new Error(`Dockerfile line ${line}: expected the exec form ["program", "arg", ...], got ${args}`);
  }
  return argv;
}

/** ENV name=value pairs (unquoted values, as the Dockerfile writes them). */
export function envPairs({ args, line }: Instruction): Record<string, string> {
  return Object.fromEntries(args.split(/\s+/).map((pair) => {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=([^"'\s]*)$/.exec(pair);
    if (!match) throw new Error(`Dockerfile line ${line}: ENV ${pair} is not name=value without quotes`);
    return [match[1]!, match[2]!];
  }));
}

/** A .dockerignore pattern as a regular expression over paths relative to the build context. */
function patternRegExp(pattern: string): RegExp {
  if (pattern.startsWith('!')) throw new Error(`.dockerignore: exceptions (${pattern}) are not supported by the layout test`);
  const segments = pattern.replace(/^\/+/, '').split('/');
  if (segments.at(-1) === '**') throw new Error(`.dockerignore: a trailing ** (${pattern}) is not supported by the layout test`);
  const source = segments.map((segment, index) => {
    if (segment === '**') return '(?:[^/]+/)*';
    const glob = segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*').replaceAll('?', '[^/]');
    return index < segments.length - 1 ? `${glob}/` : glob;
  }).join('');
  return new RegExp(`^${source}$`);
}

/**
 * The files `docker build` sends: every file under `root` but those a .dockerignore pattern matches (a
 * matched directory is left out whole), as paths relative to `root`.
 */
export function contextFiles(root: string, dockerignore: string): string[] {
  const ignored = dockerignore.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#')).map(patternRegExp);
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = relative(root, join(dir, entry.name));
      if (ignored.some((pattern) => pattern.test(path))) continue;
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else files.push(path);
    }
  };
  walk(root);
  return files;
}
