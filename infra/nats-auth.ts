// The locked bus's NATS authorization (infra/nats/auth.conf), generated from the permissions in
// packages/bus/src/permissions.ts: `pnpm nats:auth` rewrites it, `--check` fails when it is stale
// (a test runs that). NATS_NAMESPACE: a deployment that uses one (the file names its subjects).
import { readFileSync, writeFileSync } from 'node:fs';
import { natsAuthorizationConf } from '@kn/bus';
import { BaseConfig, parseConfig } from '@kn/service';

const FILE = 'infra/nats/auth.conf';
const conf = natsAuthorizationConf(parseConfig(BaseConfig.pick({ NATS_NAMESPACE: true })).NATS_NAMESPACE);
if (process.argv.includes('--check')) {
  if (readFileSync(FILE, 'utf8') !== conf) {
    console.error(`${FILE} is stale: run pnpm nats:auth`);
    process.exit(1);
  }
} else {
  writeFileSync(FILE, conf);
  console.log(`wrote ${FILE}`);
}
