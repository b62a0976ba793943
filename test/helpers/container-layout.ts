import { execFile } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { contextFiles, envPairs, execForm, parseDockerfile, type Instruction, type Stage } from './dockerfile.js';
import { PATIENCE_MS } from './patience.js';
import { freePort, startServerProcess, type ServerProcess } from './processes.js';

/**
 * The container image's layout built without Docker, from the Dockerfile itself: each stage is a directory,
 * its COPY lines copy (from the build context as .dockerignore filters it, or from the build stage), its ENV,
 * USER, VOLUME, HEALTHCHECK and CMD are read, and its RUN lines run, with two stand-ins that Docker would
 * not need: the build stage's `npm ci` is the repository's installed node_modules (the same lockfile), and
 * the image's `mkdir <volume> && chown` is a data directory the test gives each start, as a volume would be.
 * The image's `npm ci --omit=dev` and `npm pkg` lines run for real (npm's cache first).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// npm ci and the build take the registry or npm's cache, and seconds of CPU: slow is not a failure.
const INSTALL_PATIENCE_MS = 10 * PATIENCE_MS;
/** Who plays the image's `node` user when the test runs as root: nobody, so the app's files are not its own. */
const NOBODY = { uid: 65534, gid: 65534 };

const run = promisify(execFile);

export interface ContainerLayout {
  /** The image's WORKDIR, built. */
  appDir: string;
  /** The image's ENV. */
  env: Record<string, string>;
  /** CMD and HEALTHCHECK CMD, as written. */
  command: string[];
  healthcheck: string[];
  user: string | undefined;
  volumes: string[];
  /** Directories outside WORKDIR that a RUN makes for the image's user (`mkdir /data && chown node:node /data`). */
  userDirs: string[];
  /** The uid and gid playing the image's USER: nobody when the test runs as root, else the runner itself (undefined). */
  runAs: { uid: number; gid: number } | undefined;
  /** A new empty data directory the image's user owns: what a fresh volume at GATEHOUSE_DATA_DIR is. */
  volume(): string;
  /** Starts CMD as the image's user with the image's ENV, `env` on top (PORT is a free port), and waits until it is ready. */
  start(env: Record<string, string>, options?: { workerOnly?: boolean }): Promise<ServerProcess>;
  /** Runs a command in the layout, as `docker exec` would (the image's user, ENV and WORKDIR); resolves with its exit code and output. */
  exec(argv: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }>;
  remove(): Promise<void>;
}

interface StageState { stage: Stage; dir: string; workdir: string; env: Record<string, string> }

/** Where an absolute path of a stage's file system lies in its directory (only paths under WORKDIR exist here). */
function local(state: StageState, path: string): string {
  const absolute = isAbsolute(path) ? path : posix.join(state.workdir, path);
  const inside = posix.relative(state.workdir, absolute);
  if (inside.startsWith('..')) throw new Error(`${absolute} is outside WORKDIR ${state.workdir}: the layout test has no place for it`);
  return join(state.dir, inside);
}

/** Copies a file or a directory's contents, as COPY does, into `dest` (a directory when it ends with / or there are several sources). */
function copyInto(source: string, dest: string, destIsDir: boolean) {
  if (statSync(source).isDirectory()) cpSync(source, dest, { recursive: true });
  else cpSync(source, destIsDir ? join(dest, basename(source)) : dest);
}

function copy(state: StageState, step: Instruction, stages: Map<string, StageState>, context: string[], runAs: ContainerLayout['runAs']) {
  const parts = step.args.split(/\s+/);
  const dest = parts.pop()!;
  const destLocal = local(state, dest);
  const destIsDir = dest.endsWith('/') || parts.length > 1;
  for (const source of parts) {
    if (step.flags.from) {
      const from = stages.get(step.flags.from);
      if (!from) throw new Error(`Dockerfile line ${step.line}: no stage named ${step.flags.from}`);
      copyInto(local(from, source), destLocal, destIsDir);
      continue;
    }
    const prefix = source === '.' ? '' : `${source.replace(/\/$/, '')}/`;
    const matched = context.filter((file) => file === source || file.startsWith(prefix));
    if (matched.length === 0) throw new Error(`Dockerfile line ${step.line}: ${source} is not in the build context (.dockerignore)`);
    for (const file of matched) {
      const target = file === source ? (destIsDir ? join(destLocal, basename(file)) : destLocal) : join(destLocal, file.slice(prefix.length));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(ROOT, file), target);
    }
  }
  if (step.flags.chown) {
    if (step.flags.chown !== 'node:node') throw new Error(`Dockerfile line ${step.line}: --chown=${step.flags.chown}: the layout test knows node:node only`);
    if (runAs) chownTree(destLocal, runAs);
  }
}

function chownTree(path: string, { uid, gid }: { uid: number; gid: number }) {
  chownSync(path, uid, gid);
  if (!statSync(path).isDirectory()) return;
  for (const entry of readdirSync(path, { recursive: true })) chownSync(join(path, String(entry)), uid, gid);
}

/** The build stage's `npm ci`: the repository's installed node_modules, for the root and each workspace whose manifest the stage copied. */
function linkInstalledModules(state: StageState) {
  const manifests = readdirSync(state.dir, { recursive: true }).map(String).filter((path) => basename(path) === 'package.json' && !path.includes('node_modules'));
  for (const manifest of manifests) {
    const modules = join(ROOT, dirname(manifest), 'node_modules');
    if (existsSync(modules)) symlinkSync(modules, join(state.dir, dirname(manifest), 'node_modules'));
  }
}

/** A RUN line: run in the stage's directory with the stage's ENV, with the stand-ins the file comment names. */
async function runStep(state: StageState, step: Instruction, isImage: boolean, userDirs: string[]) {
  const command = step.args;
  if (/^npm ci\b/.test(command) && !isImage) return linkInstalledModules(state);
  const userDir = /^mkdir (\/\S+) && chown node:node \1$/.exec(command)?.[1];
  if (userDir && isImage) return void userDirs.push(userDir);
  if (isImage && !/^npm (ci|pkg)\b/.test(command)) throw new Error(`Dockerfile line ${step.line}: the layout test does not know how to run "${command}" in the image`);
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME, ...(process.env.TMPDIR && { TMPDIR: process.env.TMPDIR }), ...state.env,
    npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false',
  };
  await run('sh', ['-c', command], { cwd: state.dir, env, timeout: INSTALL_PATIENCE_MS, maxBuffer: 64 * 1024 * 1024 });
}

interface Image { command: string[]; healthcheck: string[]; user: string | undefined; volumes: string[]; userDirs: string[] }

/** Builds each stage of the Dockerfile into a directory under `root`; the last stage's directory and what it declares are the image. */
async function buildStages(root: string, runAs: ContainerLayout['runAs']): Promise<{ last: StageState; image: Image }> {
  const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const context = contextFiles(ROOT, readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
  const built = new Map<string, StageState>();
  let image!: Image;
  let state!: StageState;
  for (const [index, stage] of stages.entries()) {
    const isImage = index === stages.length - 1;
    image = { command: [], healthcheck: [], user: undefined, volumes: [], userDirs: [] };
    state = { stage, dir: join(root, stage.name ?? `stage-${index}`), workdir: '/', env: {} };
    mkdirSync(state.dir);
    for (const step of stage.instructions) {
      switch (step.keyword) {
        case 'WORKDIR': state.workdir = step.args; break;
        case 'COPY': copy(state, step, built, context, runAs); break;
        case 'RUN': await runStep(state, step, isImage, image.userDirs); break;
        case 'ENV': Object.assign(state.env, envPairs(step)); break;
        case 'USER': image.user = step.args; break;
        case 'VOLUME': image.volumes.push(...step.args.split(/\s+/)); break;
        case 'HEALTHCHECK': image.healthcheck = execForm({ args: step.args.replace(/^CMD\s+/, ''), line: step.line }); break;
        case 'CMD': image.command = execForm(step); break;
        case 'EXPOSE': break;
        default: throw new Error(`Dockerfile line ${step.line}: ${step.keyword} inside a stage is not something the layout test knows`);
      }
    }
    if (stage.name) built.set(stage.name, state);
  }
  return { last: state, image };
}

/** Whether a user other than the owner can run the file: every directory above it searchable by others, itself executable by them. */
function runnableByOthers(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return (statSync(path).mode & 0o001) !== 0;
  }
}

/**
 * The node that plays the image's: this test's own (CI runs the suite on Node.js 20 and 24), linked into the
 * layout when the image's user could not reach it where it is (npx installs node@24 under /root, closed to others).
 */
function nodeFor(runAs: ContainerLayout['runAs'], root: string): string {
  if (!runAs || runnableByOthers(process.execPath)) return process.execPath;
  const linked = join(root, 'node');
  try { linkSync(process.execPath, linked); } catch { cpSync(process.execPath, linked); }
  return linked;
}

/** Builds every stage of the Dockerfile into a new temporary directory. */
export async function buildContainerLayout(): Promise<ContainerLayout> {
  const runAs = process.getuid?.() === 0 ? NOBODY : undefined;
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-container-'));
  chmodSync(root, 0o755); // the image's user reaches its files through it
  const remove = () => rm(root, { recursive: true, force: true });
  const { last, image } = await buildStages(root, runAs).catch(async (error: unknown) => { await remove(); throw error; });
  const home = join(root, 'home');
  mkdirSync(home);
  if (runAs) chownSync(home, runAs.uid, runAs.gid);
  let volumeCount = 0;

  const baseEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH, HOME: home, ...last.env, ...env });
  const node = nodeFor(runAs, root);
  const argv = (command: string[]) => (command[0] === 'node' ? [node, ...command.slice(1)] : command);
  return {
    ...image, appDir: last.dir, env: last.env, runAs, remove,
    volume() {
      const dir = join(root, `volume-${++volumeCount}`);
      mkdirSync(dir);
      if (runAs) chownSync(dir, runAs.uid, runAs.gid);
      return dir;
    },
    async start(env, options = {}) {
      const port = await freePort();
      return startServerProcess({ argv: argv(image.command), cwd: last.dir, env: baseEnv({ PORT: String(port), ...env }), port, ...runAs, workerOnly: options.workerOnly });
    },
    exec(command, env) {
      const [program, ...args] = argv(command);
      return new Promise((resolve) => {
        execFile(program!, args, { cwd: last.dir, env: baseEnv(env), timeout: PATIENCE_MS, ...runAs }, (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }));
      });
    },
  };
}
