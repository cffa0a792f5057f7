// Where set-up puts model folders (infra/ensure-model.sh): the one module of @kn/embedding that reads
// the environment. A service names its own folder (EMBEDDING_MODEL_PATH) in its configuration.
import { homedir } from 'node:os';
import path from 'node:path';

/** The model a search process uses when nobody names another: the folder set-up writes (all-MiniLM-L6-v2's int8 graph). */
export const DEFAULT_MODEL = 'all-MiniLM-L6-v2-int8';

/** `$KN_MODEL_CACHE`, else `~/.cache/kn-models`: the folder of model folders, as infra/ensure-model.sh writes it. */
export function modelCache(): string {
  return process.env.KN_MODEL_CACHE || path.join(homedir(), '.cache', 'kn-models');
}

/** The folder of a model in the cache (by default, the default model's). */
export function defaultModelPath(model: string = DEFAULT_MODEL): string {
  return path.join(modelCache(), model);
}
