import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_MODEL } from '@kn/embedding';
import { loadConfig as gatewayConfig } from '../gateway/src/config.ts';
import { loadConfig as searchConfig } from '../services/search/src/config.ts';

test('the deployment validates with the real tools: compose file, NATS configuration, Prometheus rules and their unit tests, dashboard queries', () => {
  const run = spawnSync('bash', ['infra/check-deploy.sh'], { encoding: 'utf8' });
  expect(run.stderr.replace(/^installing .*\n/gm, '')).toBe('');
  expect(run.stdout).toContain('deployment files valid');
  expect(run.status).toBe(0);
}, 300_000);

// Without a Docker engine the image cannot be built here: what the Dockerfile would make of the
// repository is read from its instructions, and what each container's process would configure
// itself from is the compose file as docker-compose resolves it (with .env.example), parsed by
// the processes' own configuration schemas.

interface Step {
  op: string;
  args: string;
}
interface Stage {
  image: string;
  name: string | null;
  steps: Step[];
}

function dockerfile(): Stage[] {
  const lines = readFileSync('Dockerfile', 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op, args] = /^(\S+)\s+(.*)$/.exec(line)!;
    if (op!.toUpperCase() === 'FROM') {
      const [image, as, name] = args!.split(/\s+/);
      stages.push({ image: image!, name: as?.toUpperCase() === 'AS' ? name! : null, steps: [] });
    } else stages.at(-1)!.steps.push({ op: op!.toUpperCase(), args: args! });
  }
  return stages;
}

/** A COPY's options, sources and destination. */
function copyOf(step: Step) {
  const words = step.args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length) ?? null;
  const paths = words.filter((w) => !w.startsWith('--'));
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1)! };
}

/** The index of the first step of a stage that matches. */
const stepAt = (stage: Stage, op: string, match: (args: string) => boolean) => stage.steps.findIndex((s) => s.op === op && match(s.args));

type Compose = { services: Record<string, { environment?: Record<string, string> }> };
let resolved: Compose | undefined;
/** `docker-compose config` with .env.example, as JSON (docker-compose 1.x writes YAML only: Python's yaml, which it runs on, reads it). */
function compose(): Compose {
  resolved ??= resolveCompose();
  return resolved;
}
function resolveCompose(): Compose {
  spawnSync('bash', ['-c', '. infra/need.sh; need docker-compose docker-compose'], { stdio: 'ignore' });
  const args = ['--env-file', '.env.example', '-f', 'docker-compose.yml', 'config'];
  const json = spawnSync('docker-compose', [...args, '--format', 'json'], { encoding: 'utf8' });
  if (json.status === 0 && json.stdout.trimStart().startsWith('{')) return JSON.parse(json.stdout);
  const yaml = spawnSync('docker-compose', args, { encoding: 'utf8' });
  expect(yaml.stderr).toBe('');
  const program = spawnSync('bash', ['-c', 'command -v docker-compose'], { encoding: 'utf8' }).stdout.trim();
  const python = /^#!\s*(\S+)/.exec(readFileSync(program, 'utf8').slice(0, 200))![1]!;
  const parsed = spawnSync(python, ['-c', 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'], {
    input: yaml.stdout,
    encoding: 'utf8',
  });
  return JSON.parse(parsed.stdout);
}

/** Whether .dockerignore keeps a path of the repository out of the build context. */
function ignored(file: string) {
  const patterns = readFileSync('.dockerignore', 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const piece = (glob: string) => glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
  const regex = (pattern: string) => new RegExp(`^${pattern.replace(/^\//, '').split('**/').map(piece).join('(.*/)?')}$`);
  const parts = file.split('/');
  // A pattern that matches a folder excludes everything in it.
  return patterns.some((p) => parts.some((_, i) => regex(p).test(parts.slice(0, i + 1).join('/'))));
}

const stages = dockerfile();
const image = stages.at(-1)!;
const workdir = image.steps.findLast((s) => s.op === 'WORKDIR')!.args;
const env = (stage: Stage) =>
  Object.fromEntries(stage.steps.filter((s) => s.op === 'ENV').map((s) => s.args.split('=') as [string, string]));

test('the image carries the sentence encoder: set up as on a machine, kept where the search service looks, named by docker-compose', () => {
  const script = readFileSync('infra/ensure-model.sh', 'utf8');
  const code = script.split('\n').filter((l) => !l.trim().startsWith('#'));
  const model = /^model=(\S+)$/m.exec(script)![1]!;
  expect(model).toBe(DEFAULT_MODEL);

  // A stage runs infra/ensure-model.sh with the files it uses: the same pins and checks as a machine.
  const setup = stages.find((s) => stepAt(s, 'RUN', (a) => a.includes('infra/ensure-model.sh')) >= 0);
  expect(setup?.name).toBeTruthy();
  const cache = /KN_MODEL_CACHE=(\S+)/.exec(setup!.steps[stepAt(setup!, 'RUN', (a) => a.includes('infra/ensure-model.sh'))]!.args)![1]!;
  const used = new Set(['infra/ensure-model.sh', ...code.flatMap((l) => [...l.matchAll(/infra\/[\w.-]+\.\w+/g)].map((m) => m[0]))]);
  const copied = setup!.steps.filter((s) => s.op === 'COPY').flatMap((s) => copyOf(s).sources);
  expect([...used].filter((file) => !copied.includes(file))).toEqual([]);

  // The image keeps the folder it wrote as the model cache, where the search service looks by default …
  const kept = image.steps.filter((s) => s.op === 'COPY').map(copyOf);
  const models = kept.find((c) => c.from === setup!.name && c.sources.includes(cache));
  expect(models).toBeDefined();
  expect(env(image).KN_MODEL_CACHE).toBe(models!.dest);

  // … and the search containers name that model.
  const search = searchConfig(compose().services.search!.environment);
  expect(search.EMBEDDING_MODEL_PATH).toBe(path.posix.join(models!.dest, model));
});

test('the image builds the web app the gateway serves, from everything its build reads', () => {
  const copied = image.steps.filter((s) => s.op === 'COPY' && !copyOf(s).from).flatMap((s) => copyOf(s).sources);
  // Every tsconfig the build's esbuild reads, up the `extends` of web/ and the packages it bundles.
  const configs = ['web/tsconfig.json', 'packages/client/tsconfig.json'].flatMap((file) => {
    const chain: string[] = [];
    for (let at = file; existsSync(at); ) {
      chain.push(at);
      const base = JSON.parse(readFileSync(at, 'utf8')).extends as string | undefined;
      if (!base) break;
      at = path.posix.normalize(path.posix.join(path.posix.dirname(at), base));
    }
    return chain;
  });
  const missing = configs.filter((file) => !copied.some((source) => file === source || file.startsWith(`${source}/`)));
  expect(missing).toEqual([]);

  const install = stepAt(image, 'RUN', (a) => a.includes('pnpm install'));
  const build = stepAt(image, 'RUN', (a) => a.includes('pnpm --filter @kn/web build'));
  const lastCopy = image.steps.findLastIndex((s) => s.op === 'COPY' && !copyOf(s).from);
  expect(install).toBeGreaterThan(lastCopy);
  expect(build).toBeGreaterThan(install);
  // The build writes web/dist (web/build.ts), where the gateway's WEB_ROOT points from the working directory.
  const gateway = gatewayConfig(compose().services.gateway!.environment);
  expect(path.posix.resolve(workdir, gateway.WEB_ROOT)).toBe(path.posix.join(workdir, 'web', 'dist'));
});

test('the build context holds what the Dockerfile copies, and neither a built web app nor secrets', () => {
  const sources = stages.flatMap((s) =>
    s.steps.filter((step) => step.op === 'COPY' && !copyOf(step).from).flatMap((step) => copyOf(step).sources),
  );
  expect(sources.filter((source) => !existsSync(source) || ignored(source))).toEqual([]);
  const kept = ['.env', 'web/dist/index.html', 'services/search/node_modules/zod/package.json', 'datasets/stackexchange-beer/Posts.xml'];
  expect(kept.filter((file) => !ignored(file))).toEqual([]);
});
