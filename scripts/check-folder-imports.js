// `npm run lint` (and so CI) runs this beside ESLint: the folder-level import rule of docs/architecture.md.
// ESLint's import/no-cycle follows files, so two folders whose files import each other through different files
// (users/accounts.ts -> email-addresses/, email-addresses/service.ts -> users/) pass it. Here each top-level
// folder of src/ is one node, and any loop between folders fails: without loops the folders stack into floors
// and every import runs down them, from the domains towards platform/.
//
// Usage: node scripts/check-folder-imports.js [src directory]   (default: src/)
// Exit codes: 0 no loop, 1 a loop (each printed with one import per step), 2 the directory cannot be read.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// `import x from './a.js'`, `import type {…} from`, `export … from`, a bare `import './a.js'`, and `import('./a.js')`.
const IMPORT = /(?:^|[\s;])(?:import|export)\s(?:[^'"]*?\sfrom\s*)?['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The top-level folder of src/ a file is in, or, for a file at the top, its name without the extension: an import
 * names `./config.js` where the file is `config.ts`, and both must be one node.
 */
const folderOf = (root, file) => relative(root, file).split(sep)[0].replace(/\.(ts|tsx|js)$/, '');

/** The folder graph: for each folder, the folders it imports, each with the first import that does. */
export function folderGraph(root) {
  const graph = new Map();
  for (const file of sourceFiles(root)) {
    const from = folderOf(root, file);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = resolve(dirname(file), match[1] ?? match[2]);
      if (!target.startsWith(root + sep)) continue;
      const to = folderOf(root, target);
      if (to === from || graph.get(from).has(to)) continue;
      graph.get(from).set(to, `${relative(process.cwd(), file)} imports ${match[1] ?? match[2]}`);
    }
  }
  return graph;
}

/** The loops of the graph: its strongly connected components of more than one folder (Tarjan). */
export function loops(graph) {
  let index = 0;
  const order = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), order.get(next)));
    }
    if (low.get(node) !== order.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!order.has(node)) visit(node);
  return found;
}

/** One cycle through the loop's folders, as the steps that make it: `a -> b (file imports spec)`. */
function cycleIn(graph, component) {
  const inLoop = new Set(component);
  const start = component[0];
  const path = [start];
  const seen = new Set([start]);
  const walk = (node) => {
    for (const next of graph.get(node).keys()) {
      if (!inLoop.has(next)) continue;
      if (next === start) return true;
      if (seen.has(next)) continue;
      seen.add(next);
      path.push(next);
      if (walk(next)) return true;
      path.pop();
    }
    return false;
  };
  walk(start);
  return path.map((node, i) => {
    const next = path[(i + 1) % path.length];
    return `  ${node} -> ${next}   (${graph.get(node).get(next)})`;
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? 'src');
  try {
    if (!statSync(root).isDirectory()) throw new Error(`${root} is not a directory`);
  } catch (err) {
    console.error(`check-folder-imports: ${err.message}`);
    process.exit(2);
  }
  const graph = folderGraph(root);
  const found = loops(graph);
  if (found.length === 0) {
    console.log(`${graph.size} folders of ${relative(process.cwd(), root) || '.'}/ import each other in no loop.`);
  } else {
    for (const component of found) {
      console.error(`Folders that import each other in a loop: ${component.join(', ')}`);
      console.error(cycleIn(graph, component).join('\n'));
    }
    console.error('Break each loop so imports run one way (docs/architecture.md, "Floors"): a core domain offers a hook that the newer one registers.');
    process.exit(1);
  }
}
