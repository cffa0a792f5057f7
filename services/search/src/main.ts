import { runMain } from '@kn/service';
import { loadConfig, start } from './index.ts';

void runMain('search', () => start(loadConfig()));
