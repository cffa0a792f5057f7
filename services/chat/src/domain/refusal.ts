import { AppError } from '@kn/contracts';

/** What a person is told in chat when the network refused (their rights, a deleted question, …), or could not answer. */
export const sayWhy = (err: unknown) =>
  err instanceof AppError && err.status < 500 ? err.message : 'the knowledge network could not do this now; try again later';
