/**
 * Work on what users write and upload that passed one of its limits. It is data, not a fault: the
 * request is refused whole (413 when something is too large, 422 when it is too deep or too costly
 * to read), and the worker threads send it back as a value (text-work.ts).
 */
export type Refusal = { kind: 'too_large' | 'too_complex'; message: string };

export class LimitExceeded extends Error {
  override name = 'LimitExceeded';
  readonly kind: Refusal['kind'];
  constructor(kind: Refusal['kind'], message: string) {
    super(message);
    this.kind = kind;
  }
}

/** A file that is not what its type says, or is damaged: it is kept, without text. */
export class Unreadable extends Error {
  override name = 'Unreadable';
}
