import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The import graph of a source tree as TypeScript reads it: every `import` (also `import type`: a type-only circle
 * still ties the files' meaning together, and the house rule is "imports point downward" for both), `export ... from`
 * and `import()`. Relative specifiers are resolved to files (`./x.js` -> `./x.ts`, `./dir` -> `./dir/index.ts`);
 * anything else is a package and is kept as written.
 */
export interface ImportGraph {
  root: string;
  /** Every source file, relative to root (POSIX separators). */
  files: string[];
  /** file -> the files it imports (relative to root). */
  edges: Map<string, string[]>;
  /** file -> the packages it imports (bare specifiers). */
  packages: Map<string, string[]>;
}

const SOURCE = /\.(ts|tsx|mts|cts)$/;

export function listFiles(dir: string, keep: (path: string) => boolean = () => true): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name === 'node_modules') continue;
      out.push(...listFiles(path, keep));
    } else if (keep(path)) out.push(path);
  }
  return out.sort();
}

function resolveRelative(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base.replace(/\.(m|c)?js$/, '.$1ts'),
    base.replace(/\.jsx?$/, '.tsx'),
    base,
    `${base}.ts`,
    `${base}.tsx`,
    join(base, 'index.ts'),
    join(base, 'index.tsx'),
  ];
  return candidates.find((c) => SOURCE.test(c) && existsSync(c));
}

export function importGraph(root: string): ImportGraph {
  const abs = resolve(root);
  const files = listFiles(abs, (p) => SOURCE.test(p) && !p.endsWith('.d.ts'));
  const rel = (p: string) => relative(abs, p).split('\\').join('/');
  const edges = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const local: string[] = [];
    const external: string[] = [];
    for (const { fileName } of importedFiles) {
      if (fileName.startsWith('.')) {
        const target = resolveRelative(file, fileName);
        if (target !== undefined) local.push(rel(target));
      } else external.push(fileName);
    }
    edges.set(rel(file), [...new Set(local)]);
    packages.set(rel(file), [...new Set(external)]);
  }
  return { root: abs, files: files.map(rel), edges, packages };
}

/**
 * The import circles: every strongly connected component with more than one file (or a file importing itself),
 * each shown as one concrete loop through it (a -> b -> ... -> a) so the message says where to cut.
 */
export function findCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative (no recursion limit on deep trees).
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const start of edges.keys()) {
    if (indexOf.has(start)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    indexOf.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = edges.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const to = targets[frame.next++]!;
        if (!indexOf.has(to)) {
          indexOf.set(to, index);
          low.set(to, index++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, indexOf.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === indexOf.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = component.length === 1 && (edges.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  }
  return components.map((component) => loopThrough(component, edges));
}

/** A shortest loop from the component's first file (sorted) back to itself, staying inside the component. */
function loopThrough(component: string[], edges: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const to of edges.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = previous.get(at))
          path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [...component, component[0]!];
}
