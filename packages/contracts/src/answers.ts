import type { DeclaredStatus, Operation } from './endpoint.ts';

/**
 * Every status an operation of the API can answer, and when: what follows from its shape (derived
 * here, so that a new operation declares it without anyone remembering), and what it declares
 * itself (`http.answers`: 409 and 422 of publishing, say). The OpenAPI document lists exactly
 * these; the test suite and the fuzzer fail on a status an operation does not list.
 */
export type Answers = Map<number, string>;

/** What an operation that takes a description declares besides (spread into `http.answers`). */
export const descriptionAnswers = {
  422: 'the description is nested deeper than HTML_MAX_DEPTH elements, or takes more time or memory to sanitize than its budget (ContentTooComplex)',
} as const;

/** What an attachment upload declares besides: the limits of reading its text. */
export const attachmentTextAnswers = {
  413: 'a DOCX part unpacks to more than DOCUMENT_MAX_UNPACKED_BYTES, or the archive has too many entries (ContentTooLarge)',
  422: 'an HTML file is nested deeper than HTML_MAX_DEPTH elements, or the file takes more time or memory to read than its budget (ContentTooComplex)',
} as const;

/** POSTs but uploads: an upload streams its file, the gateway keeps no answer to replay, so it reads no key. */
export const takesIdempotencyKey = (op: Operation) => op.http?.method === 'POST' && !op.http.upload;

export function answersOf(op: Operation): Answers {
  const http = op.http;
  if (!http) throw new Error('an internal operation has no HTTP answers');
  const answers: Answers = new Map();
  const add = (status: number, when: string) => {
    const known = answers.get(status);
    answers.set(status, known ? `${known}; ${when}` : when);
  };
  const user = http.auth === 'user';
  const json = !http.upload && !http.download;
  const keyed = takesIdempotencyKey(op);

  const success = http.status ?? (op.response || http.download ? 200 : 204);
  add(success, http.download ? 'the file' : op.response ? 'done' : 'done, no body');
  if (json && http.method === 'GET') add(304, 'not modified: the answer has the ETag sent in If-None-Match');

  const refusals = [
    ...(op.params || op.query || op.body || http.upload ? ['a parameter or the body fails validation (ValidationError)'] : []),
    ...(json && op.body ? ['the body is not JSON (InvalidJson)'] : []),
    ...(user ? ['more than one act-on-behalf header, or a malformed one (MultipleOnBehalfHeaders, ValidationError)'] : []),
    ...(keyed ? ['a malformed Idempotency-Key (ValidationError)'] : []),
  ];
  if (refusals.length) add(400, refusals.join('; '));
  if (user) {
    add(401, 'no token, or an unknown, revoked or expired one (Unauthorized)');
    add(
      403,
      http.roles
        ? `the caller has none of the roles ${http.roles.join(', ')}, or may not act on behalf of others (Forbidden)`
        : 'the caller may not act on behalf of others (Forbidden)',
    );
    add(429, "the token's rate limit is used up (RateLimited; Retry-After says when to try again)");
  }
  if (op.params) add(404, 'it does not exist, or the caller may not see it (NotFound)');
  if (http.download) add(404, 'the stored bytes are gone (NotFound)');
  if (user) add(404, 'the user named by an act-on-behalf header does not exist (NotFound)');
  if (keyed)
    add(409, 'the Idempotency-Key was used for another request, or its first request still runs (Conflict; then with Retry-After)');
  if (op.body || http.upload)
    add(
      413,
      http.upload
        ? 'the file is larger than ATTACHMENT_MAX_BYTES (FileTooLarge)'
        : 'the body is larger than BODY_LIMIT, or its change too large for the bus (PayloadTooLarge)',
    );
  if (op.body || http.upload)
    add(
      415,
      http.upload
        ? 'the body is not multipart/form-data (UnsupportedMediaType)'
        : 'the body is not JSON in UTF-8/16/32 (UnsupportedMediaType)',
    );
  add(431, 'the request line and headers together are larger than 16 KiB: a long query string, say (HeaderFieldsTooLarge)');
  for (const [status, when] of Object.entries(http.answers ?? {}) as Array<[string, string]>) add(Number(status) as DeclaredStatus, when);
  add(500, 'a fault of the service; error_id names the log entry (InternalError)');
  add(503, 'a service or the bus did not answer in time, or the search index is still loading (ServiceUnavailable, SearchIndexLoading)');
  return answers;
}
