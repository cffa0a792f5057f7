import { copies, describeCopy, environmentReads, significantLines, sourceFiles } from '../infra/code-rules.ts';

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
