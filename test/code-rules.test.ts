import {
  CYCLE_FREE,
  copies,
  describeCopy,
  environmentReads,
  importCycles,
  importsOf,
  LAYERS,
  layerViolations,
  significantLines,
  sourceFiles,
} from '../infra/code-rules.ts';

// CONTRIBUTING's "Code", kept by a check: these read source text on purpose.
const files = sourceFiles();

/**
 * Besides a package's configuration module (`src/config.ts`), the modules that may read the
 * environment, each with the reason.
 */
const READ_THE_ENVIRONMENT: Record<string, string> = {
  'packages/service/src/index.ts': 'parseConfig: every config.ts parses the environment with it',
  'packages/service/src/process.ts': 'runWith re-executes the process before any configuration, handing the environment on',
  'packages/telemetry/src/index.ts': "createLogger's default level: runMain logs a failed start before there is a configuration",
};

test('only configuration reads the environment (process.env)', () => {
  const reads = files
    .filter((f) => !f.path.endsWith('/src/config.ts') && !(f.path in READ_THE_ENVIRONMENT))
    .flatMap((f) => environmentReads(f).map((line) => `${f.path}:${line}`));
  expect(reads).toEqual([]);
});

test('the modules allowed to read the environment still do (else take them off the list)', () => {
  const readers = files.filter((f) => environmentReads(f).length).map((f) => f.path);
  expect(Object.keys(READ_THE_ENVIRONMENT).filter((allowed) => !readers.includes(allowed))).toEqual([]);
});

test('no six lines of source stand twice', () => {
  expect(copies(files).map(describeCopy)).toEqual([]);
});

test('the search service keeps its layers: the core, the rules and the embeddings use no engine, neither engine the other, none the wiring', () => {
  expect(layerViolations(files, LAYERS)).toEqual([]);
});

test('no import cycles in the search service', () => {
  expect(CYCLE_FREE.flatMap((place) => importCycles(files, place))).toEqual([]);
});

describe('the layer and cycle rules', () => {
  const file = (path: string, ...lines: string[]) => ({ path, text: lines.join('\n') });

  test('read every form of import, relative ones only, resolved; not commented ones', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b/b.ts';",
      'import {',
      '  c,',
      '  type C,',
      "} from './c.ts';",
      "export { d } from './d.ts';",
      "export type * from './e.ts';",
      "import './f.ts';",
      "const g = await import('./g.ts');",
      "import { z } from '@kn/contracts';",
      "// import { x } from './x.ts';",
      "/* import { y } from './y.ts'; */",
      "const text = 'not from here';",
    ];
    expect(importsOf(file('s/src/domain/m.ts', ...text))).toEqual([
      's/src/domain/a.ts',
      's/src/b/b.ts',
      's/src/domain/c.ts',
      's/src/domain/d.ts',
      's/src/domain/e.ts',
      's/src/domain/f.ts',
      's/src/domain/g.ts',
    ]);
  });

  test('a domain file that imports an engine, an engine the other, or a layer the wiring, breaks the rules; the core does not', () => {
    const search = 'services/search/src';
    const synthetic = [
      file(`${search}/domain/rule.ts`, "import { words } from '../core/words.ts';", "import type { Store } from '../local/store.ts';"),
      file(`${search}/core/events.ts`, "import type { Rule } from '../domain/rule.ts';"),
      file(`${search}/local/store.ts`, "import { rule } from '../domain/rule.ts';", "import { applyEvent } from '../core/events.ts';"),
      file(`${search}/elasticsearch/feed.ts`, "import { store } from '../local/store.ts';"),
      file(`${search}/semantic/vectors.ts`, "import type { SearchConfig } from '../config.ts';"),
      file(`${search}/jobs/rebuild.ts`, "import type { SearchBackend } from '../core/backend.ts';"),
    ];
    expect(layerViolations(synthetic, LAYERS)).toEqual([
      `${search}/domain/rule.ts imports ${search}/local/store.ts: the rules hold for every engine`,
      `${search}/elasticsearch/feed.ts imports ${search}/local/store.ts: one engine does not use the other`,
      `${search}/semantic/vectors.ts imports ${search}/config.ts: the wiring starts the layers, not the other way round`,
    ]);
  });

  test('the real tree with one engine import added to the domain breaks the rules', () => {
    const broken = files.map((f) =>
      f.path === 'services/search/src/domain/match.ts' ? { ...f, text: `import { TermIndex } from '../local/postings.ts';\n${f.text}` } : f,
    );
    expect(layerViolations(broken, LAYERS)).toEqual([
      'services/search/src/domain/match.ts imports services/search/src/local/postings.ts: the rules hold for every engine',
    ]);
  });

  test('the real tree with a domain file reaching up into a job breaks the rules', () => {
    const broken = files.map((f) =>
      f.path === 'services/search/src/domain/expert-search.ts'
        ? { ...f, text: `import type { ExpertModels } from '../jobs/expert-models.ts';\n${f.text}` }
        : f,
    );
    expect(layerViolations(broken, LAYERS)).toEqual([
      'services/search/src/domain/expert-search.ts imports services/search/src/jobs/expert-models.ts: the wiring starts the layers, not the other way round',
    ]);
  });

  test('finds each cycle (type imports too) as the shortest way round from its first file, and nothing without one', () => {
    const cyclic = [
      file('s/a.ts', "import { b } from './b.ts';"),
      file('s/b.ts', "import type { C } from './c.ts';"),
      file('s/c.ts', "import { a } from './a.ts';", "import { d } from './d.ts';"),
      file('s/d.ts', "import { outside } from '../outside.ts';"),
      file('s/e.ts', "import { f } from './f.ts';"),
      file('s/f.ts', "import { e } from './e.ts';"),
      file('s/g.ts', "import { g } from './g.ts';"),
    ];
    expect(importCycles(cyclic, 's')).toEqual(['s/a.ts → s/b.ts → s/c.ts → s/a.ts', 's/e.ts → s/f.ts → s/e.ts', 's/g.ts → s/g.ts']);
    expect(importCycles(cyclic.slice(3), 's/d.ts')).toEqual([]);
    expect(importCycles([file('s/a.ts', "import { b } from './b.ts';"), file('s/b.ts', '')], 's')).toEqual([]);
  });
});

describe('the copy finder', () => {
  const body = ['const a = one();', 'const b = two(a);', 'if (b) {', '  three(b);', '}', 'four(a, b);', 'five();', 'return six;'];
  const file = (path: string, ...lines: string[]) => ({ path, text: lines.join('\n') });

  test('counts code lines only: not blank, comment, import or lone punctuation lines', () => {
    const text = [
      "import { x } from 'x';",
      'import {',
      '  y,',
      "} from 'y';",
      '',
      '// a comment',
      '/**',
      ' * a block comment',
      ' */',
      'const a = 1; // trailing',
      '  });',
      ')',
      'const url = "nats://host";',
    ].join('\n');
    expect(significantLines(text)).toEqual([
      { line: 10, text: 'const a = 1;' },
      { line: 13, text: 'const url = "nats://host";' },
    ]);
  });

  test('finds six lines copied across files, with the lines of both places, however indented and spaced out', () => {
    const a = file('a.ts', 'start();', ...body.slice(0, 7));
    const b = file('b.ts', "import { z } from 'z';", '', ...body.slice(0, 3).map((l) => `    ${l}`), '// why', ...body.slice(3, 7));
    expect(copies([a, b])).toEqual([{ a: { file: 'a.ts', from: 2, to: 8 }, b: { file: 'b.ts', from: 3, to: 10 }, lines: 6 }]);
  });

  test('five lines are not a copy', () => {
    expect(copies([file('a.ts', ...body.slice(0, 6), 'x();'), file('b.ts', ...body.slice(0, 6), 'y();')])).toEqual([]);
  });

  test('a longer copy is one copy, also within a file', () => {
    expect(copies([file('a.ts', ...body, 'between();', ...body)])).toEqual([
      { a: { file: 'a.ts', from: 1, to: 8 }, b: { file: 'a.ts', from: 10, to: 17 }, lines: 7 },
    ]);
  });
});
