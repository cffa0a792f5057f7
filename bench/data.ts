// Where the benchmarks find their data sets. The Beer, Wine & Spirits site is in the repository
// (datasets/stackexchange-beer); the larger sets a few benchmarks also measure on stay outside it,
// optional, in SHARED_DATA_DIR (default: ../shared/data beside the clone). datasets/README.md
// says what each is and where it comes from.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { dataset } from '@kn/testing';

/** The data sets kept outside the repository: what to put in the folder of each. */
const outside: Record<string, string> = {
  'stackexchange-quantumcomputing':
    'the unpacked Stack Exchange dump of quantumcomputing.stackexchange.com (Posts.xml, Users.xml, Comments.xml, Tags.xml, PostLinks.xml, Votes.xml)',
  'semeval2016-task3': 'SemEval2016-Task3-CQA-QL-train-part2.xml of SemEval-2016 task 3',
};

/**
 * The folder of a data set: beer from the repository, the others from SHARED_DATA_DIR. One that
 * is missing ends the benchmark with one line saying what to put where (before it starts anything).
 */
export function benchData(name: string): string {
  if (!(name in outside)) return dataset(name);
  const folder = path.resolve(process.env.SHARED_DATA_DIR ?? '../shared/data', name);
  if (existsSync(folder)) return folder;
  console.error(
    `data set ${name} missing: put ${outside[name]} in ${folder} (SHARED_DATA_DIR names the folder that holds ${name}; datasets/README.md)`,
  );
  process.exit(2);
}
