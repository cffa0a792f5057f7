// Rules of CONTRIBUTING's "Code" kept by a check rather than by memory (test/code-rules.test.ts):
// only configuration reads the environment, no six lines of source stand twice, and a service's
// layers import only what they may, without cycles. `node infra/code-rules.ts` prints what breaks them.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface SourceFile {
  /** Relative to the repository's root, with forward slashes. */
  path: string;
  text: string;
}

/** The source the rules apply to: the src folders of packages, services and the gateway; not tests, not generated files. */
export function sourceFiles(root = process.cwd()): SourceFile[] {
  const roots = [
    ...['packages', 'services'].flatMap((parent) =>
      readdirSync(path.join(root, parent), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => `${parent}/${d.name}/src`),
    ),
    'gateway/src',
  ];
  const files: SourceFile[] = [];
  const walk = (dir: string) => {
    let entries: Array<{ name: string; isDirectory(): boolean }>;
    try {
      entries = readdirSync(path.join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'test') walk(rel);
      } else if (/\.[cm]?[tj]s$/.test(entry.name) && !/\.(test|d)\.[cm]?[tj]s$/.test(entry.name)) {
        const text = readFileSync(path.join(root, rel), 'utf8');
        if (!/generated.*do not edit/i.test(text.slice(0, 500))) files.push({ path: rel, text });
      }
    }
  };
  for (const dir of roots) walk(dir);
  return files;
}

/** The code of a line, or '' for a line of comment; `inComment` carries a block comment over lines. */
function codeOf(line: string, state: { inComment: boolean }): string {
  let code = line;
  if (state.inComment) {
    const end = code.indexOf('*/');
    if (end < 0) return '';
    state.inComment = false;
    code = code.slice(end + 2);
  }
  code = code.trim();
  if (code.startsWith('/*')) {
    const end = code.indexOf('*/', 2);
    if (end < 0) {
      state.inComment = true;
      return '';
    }
    code = code.slice(end + 2).trim();
  }
  // A trailing `// …` (not the `//` of a URL, which follows a colon).
  return code.startsWith('//') ? '' : code.replace(/(^|\s)\/\/.*$/, '').trim();
}

/** Where a file reads the environment: `process.env`, `process['env']`, or `env` taken from `process`. */
export function environmentReads(file: SourceFile): number[] {
  const state = { inComment: false };
  const reads: number[] = [];
  file.text.split('\n').forEach((line, i) => {
    const code = codeOf(line, state);
    if (
      /\bprocess\s*(\.\s*env\b|\[\s*['"`]env['"`]\s*\])/.test(code) ||
      /\{[^}]*\benv\b[^}]*\}\s*=\s*process\b/.test(code) ||
      /\bimport\s*\{[^}]*\benv\b[^}]*\}\s*from\s*['"](node:)?process['"]/.test(code)
    )
      reads.push(i + 1);
  });
  return reads;
}

/** A line that says nothing of its own: punctuation alone (`}`, `});`, `)`, `],`). */
const punctuation = /^[\s()[\]{};,.:]*$/;

/**
 * The lines of a file that count towards a copy, with their line numbers: trimmed, without blank
 * lines, comments, lines of punctuation alone and import statements (which the same dependency
 * makes alike everywhere).
 */
export function significantLines(text: string): Array<{ line: number; text: string }> {
  const state = { inComment: false };
  const kept: Array<{ line: number; text: string }> = [];
  let inImport = false;
  text.split('\n').forEach((raw, i) => {
    const code = codeOf(raw, state);
    if (inImport || /^import\b/.test(code)) {
      // An import statement ends with its module name (or a bare `import 'x'`).
      inImport = !/^import\s+['"]|\bfrom\s*['"][^'"]+['"];?$/.test(code);
      return;
    }
    if (!punctuation.test(code)) kept.push({ line: i + 1, text: code });
  });
  return kept;
}

/** Lines `from`–`to` of a file. */
export interface Place {
  file: string;
  from: number;
  to: number;
}
/** The same significant lines (`lines` of them) at two places. */
export interface Copy {
  a: Place;
  b: Place;
  lines: number;
}

/**
 * Every run of `size` or more significant lines that stands twice, within a file or across files:
 * each window of `size` consecutive significant lines is keyed by its text, and the windows two
 * places share one after another are one copy.
 */
export function copies(files: SourceFile[], size = 6): Copy[] {
  const lines = files.map((f) => significantLines(f.text));
  const windows = new Map<string, Array<[file: number, at: number]>>();
  lines.forEach((kept, file) => {
    for (let at = 0; at + size <= kept.length; at++) {
      const key = kept
        .slice(at, at + size)
        .map((l) => l.text)
        .join('\n');
      const seen = windows.get(key);
      if (seen) seen.push([file, at]);
      else windows.set(key, [[file, at]]);
    }
  });
  // Each pair of places a window stands at, as [file a, at a, file b, at b].
  const pairs: Array<[number, number, number, number]> = [];
  for (const places of windows.values())
    for (let i = 0; i < places.length; i++)
      for (let j = i + 1; j < places.length; j++) pairs.push([...places[i]!, ...places[j]!] as [number, number, number, number]);
  // Windows that follow each other in both places make one copy.
  pairs.sort((p, q) => p[0] - q[0] || p[2] - q[2] || p[1] - p[3] - (q[1] - q[3]) || p[1] - q[1]);
  const runs: Array<{ pair: [number, number, number, number]; windows: number }> = [];
  for (const pair of pairs) {
    const last = runs.at(-1);
    const [fa, a, fb, b] = pair;
    if (last && last.pair[0] === fa && last.pair[2] === fb && last.pair[1] + last.windows === a && last.pair[3] + last.windows === b)
      last.windows++;
    else runs.push({ pair, windows: 1 });
  }
  return runs.map(({ pair: [fa, a, fb, b], windows: n }) => {
    const place = (file: number, at: number): Place => ({
      file: files[file]!.path,
      from: lines[file]![at]!.line,
      to: lines[file]![at + n + size - 2]!.line,
    });
    return { a: place(fa, a), b: place(fb, b), lines: n + size - 1 };
  });
}

/** The code of a file without its comments, lines kept in place. */
const codeText = (text: string) => {
  const state = { inComment: false };
  return text
    .split('\n')
    .map((line) => codeOf(line, state))
    .join('\n');
};

/**
 * The modules of the repository a file imports (relative specifiers only, resolved to paths like
 * SourceFile.path): `import … from`, `import type … from`, `export … from`, `import '…'` and
 * `import('…')`, in the order they stand.
 */
export function importsOf(file: SourceFile): string[] {
  const code = codeText(file.text);
  const specifiers = [
    // A statement's clause holds no quote or semicolon, so the first `from '…'` after the keyword is its own.
    ...code.matchAll(/(?:^|[;\n])\s*(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"\n]+)['"]/g),
    ...code.matchAll(/(?:^|[;\n])\s*import\s*['"]([^'"\n]+)['"]/g),
    ...code.matchAll(/\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g),
  ]
    .sort((a, b) => a.index - b.index)
    .map((m) => m[1]!);
  const dir = path.posix.dirname(file.path);
  return [...new Set(specifiers.filter((s) => s.startsWith('./') || s.startsWith('../')).map((s) => path.posix.join(dir, s)))];
}

/** Files under (or at) `files` may import nothing under (or at) any of `mayNotImport`, because `why`. */
export interface LayerRule {
  files: string;
  mayNotImport: string[];
  why: string;
}

const under = (file: string, place: string) => file === place || file.startsWith(place.endsWith('/') ? place : `${place}/`);

/** Each import that breaks a rule, as `file imports module: why`. */
export function layerViolations(files: SourceFile[], rules: readonly LayerRule[]): string[] {
  return files.flatMap((file) =>
    rules
      .filter((rule) => under(file.path, rule.files))
      .flatMap((rule) =>
        importsOf(file)
          .filter((module) => rule.mayNotImport.some((place) => under(module, place)))
          .map((module) => `${file.path} imports ${module}: ${rule.why}`),
      ),
  );
}

/**
 * The import cycles among the files under `within` (type-only imports count: a cycle of types is
 * still two modules that cannot be understood apart), one per group of files that reach each other,
 * as the shortest way round from its first file: `a.ts → b.ts → a.ts`.
 */
export function importCycles(files: SourceFile[], within: string): string[] {
  const inside = files.filter((f) => under(f.path, within));
  const known = new Set(inside.map((f) => f.path));
  const edges = new Map(inside.map((f) => [f.path, importsOf(f).filter((m) => known.has(m))]));
  // Tarjan's strongly connected components.
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (file: string) => {
    order.set(file, order.size);
    low.set(file, order.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file)!) {
      if (!order.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, order.get(next)!));
    }
    if (low.get(file) !== order.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || edges.get(file)!.includes(file)) groups.push(group.sort());
  };
  for (const file of [...known].sort()) if (!order.has(file)) visit(file);
  return groups
    .map((group) => {
      const members = new Set(group);
      const start = group[0]!;
      // Breadth first from the start, within the group, back to the start.
      const from = new Map<string, string>();
      const queue = [start];
      for (let at = 0; at < queue.length && !from.has(start); at++)
        for (const next of edges.get(queue[at]!)!)
          if (members.has(next) && !from.has(next)) {
            from.set(next, queue[at]!);
            queue.push(next);
          }
      const way = [start];
      for (let file = from.get(start)!; file !== start; file = from.get(file)!) way.unshift(file);
      return [start, ...way].join(' → ');
    })
    .sort();
}

const search = 'services/search/src';
const engines = [`${search}/local`, `${search}/elasticsearch`];
/** What starts the service and answers for it: the skeleton's files and folders, built on the layers. */
const wiring = ['index.ts', 'main.ts', 'config.ts', 'handlers', 'consumers', 'jobs'].map((place) => `${search}/${place}`);
/**
 * The layers of the search service: the shared core, the rules and the embeddings use no engine,
 * neither engine the other, and none of them reaches up into the wiring that starts them.
 */
export const LAYERS: LayerRule[] = [
  { files: `${search}/core`, mayNotImport: engines, why: 'what every engine shares' },
  { files: `${search}/domain`, mayNotImport: engines, why: 'the rules hold for every engine' },
  { files: `${search}/semantic`, mayNotImport: engines, why: 'both engines read the same embeddings' },
  { files: `${search}/local`, mayNotImport: [`${search}/elasticsearch`], why: 'one engine does not use the other' },
  { files: `${search}/elasticsearch`, mayNotImport: [`${search}/local`], why: 'one engine does not use the other' },
  ...[`${search}/core`, `${search}/domain`, `${search}/semantic`, ...engines].map((files) => ({
    files,
    mayNotImport: wiring,
    why: 'the wiring starts the layers, not the other way round',
  })),
];
/** Where no module imports itself round a cycle. */
export const CYCLE_FREE = [search];

export const describeCopy = ({ a, b, lines }: Copy) => `${a.file}:${a.from}-${a.to} ~ ${b.file}:${b.from}-${b.to} (${lines} lines)`;

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve('infra/code-rules.ts')) {
  const files = sourceFiles();
  for (const file of files) for (const line of environmentReads(file)) console.log(`reads the environment: ${file.path}:${line}`);
  const found = copies(files);
  for (const copy of found) console.log(`copy: ${describeCopy(copy)}`);
  console.log(`${files.length} files, ${found.length} copies of 6 or more lines`);
  for (const broken of layerViolations(files, LAYERS)) console.log(`layers: ${broken}`);
  for (const cycle of CYCLE_FREE.flatMap((place) => importCycles(files, place))) console.log(`import cycle: ${cycle}`);
}
