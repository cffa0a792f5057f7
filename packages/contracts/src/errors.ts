/**
 * The error codes of the API (docs/api.md, "Errors"), as one class hierarchy shared by the
 * services and the gateway. A service throws them; the RPC layer carries them as `ErrorBody`; the
 * gateway maps the body to the HTTP response unchanged.
 */
import { z } from 'zod';

/** Every error code an answer may carry (docs/api.md, "Errors"), with its status. */
export const ErrorCodes = {
  ValidationError: 400,
  InvalidJson: 400,
  MultipleOnBehalfHeaders: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  Conflict: 409,
  PayloadTooLarge: 413,
  FileTooLarge: 413,
  ContentTooLarge: 413,
  UnsupportedMediaType: 415,
  HeaderFieldsTooLarge: 431,
  PublishValidationError: 422,
  ContentTooComplex: 422,
  RateLimited: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  SearchIndexLoading: 503,
} as const;
export type ErrorCode = keyof typeof ErrorCodes;

export const FieldError = z.object({
  path: z.string().describe('the field, dot-separated (`title`, `query.limit`, `tags.3`); a header by its name'),
  code: z.string().describe('what is wrong: too_small, too_big, invalid_type, invalid_format, …'),
  message: z.string(),
});
export type FieldError = z.infer<typeof FieldError>;

/** The one shape of every error answer. */
export const ErrorBody = z
  .object({
    code: z.enum(Object.keys(ErrorCodes) as [ErrorCode, ...ErrorCode[]]),
    message: z.string().describe('for people; not a contract'),
    errors: z.array(FieldError).optional().describe('on validation failures (400 ValidationError, 422): one per field'),
    error_id: z.string().optional().describe('on 500 only: the id under which the cause was logged'),
  })
  .meta({
    id: 'Error',
    examples: [
      {
        code: 'ValidationError',
        message: 'title: Too big: expected string to have <=100 characters',
        errors: [{ path: 'title', code: 'too_big', message: 'Too big: expected string to have <=100 characters' }],
      },
    ],
  });
export type ErrorBody = z.infer<typeof ErrorBody>;

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;
  /** Set on 500s: the id under which the cause was logged. */
  readonly errorId?: string;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    options: { errors?: FieldError[]; headers?: Record<string, string>; errorId?: string } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.errors = options.errors;
    this.headers = options.headers;
    this.errorId = options.errorId;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.errors) body.errors = this.errors;
    if (this.errorId) body.error_id = this.errorId;
    return body;
  }
}

export const validationError = (message: string, errors?: FieldError[]) =>
  new AppError(400, 'ValidationError', message, { errors: errors ?? [] });
export const invalidJson = (message = 'request body is not valid JSON') => new AppError(400, 'InvalidJson', message);
export const multipleOnBehalfHeaders = () => new AppError(400, 'MultipleOnBehalfHeaders', 'send at most one act-on-behalf header');
export const unauthorized = (message = 'missing, unknown or expired token') => new AppError(401, 'Unauthorized', message);
export const forbidden = (message = 'not allowed') => new AppError(403, 'Forbidden', message);
export const notFound = (what = 'resource') => new AppError(404, 'NotFound', `${what} not found`);
/** A method the path's resource does not have; `allow` lists those it has (the Allow header). */
export const methodNotAllowed = (method: string, allow: string) =>
  new AppError(405, 'MethodNotAllowed', `${method} is not a method of this path; it has ${allow}`, { headers: { Allow: allow } });
export const conflict = (message: string) => new AppError(409, 'Conflict', message);
export const payloadTooLarge = (message: string) => new AppError(413, 'PayloadTooLarge', message);
export const fileTooLarge = (message: string) => new AppError(413, 'FileTooLarge', message);
/** What a file holds is larger than it may unpack to (a DOCX part past DOCUMENT_MAX_UNPACKED_BYTES, say). */
export const contentTooLarge = (message: string, errors?: FieldError[]) => new AppError(413, 'ContentTooLarge', message, { errors });
/** HTML nested too deep, or a text or file that takes more time or memory to read than its budget. */
export const contentTooComplex = (message: string, errors?: FieldError[]) => new AppError(422, 'ContentTooComplex', message, { errors });
export const unsupportedMediaType = (message = 'send the body as application/json') => new AppError(415, 'UnsupportedMediaType', message);
/** The request line and headers are larger than the gateway reads (Node's 16 KiB): a long query string, say. */
export const headerFieldsTooLarge = () =>
  new AppError(431, 'HeaderFieldsTooLarge', 'the request line and headers together are larger than 16 KiB');
export const publishValidationError = (message: string, errors?: FieldError[]) =>
  new AppError(422, 'PublishValidationError', message, { errors: errors ?? [] });
export const rateLimited = (retryAfterSeconds: number) =>
  new AppError(429, 'RateLimited', 'too many requests', { headers: { 'Retry-After': String(retryAfterSeconds) } });
/** A service did not answer in time or is down: the client may try again after `Retry-After` seconds. */
export const serviceUnavailable = (message: string, retryAfterSeconds = 2) =>
  new AppError(503, 'ServiceUnavailable', message, { headers: { 'Retry-After': String(retryAfterSeconds) } });
export const searchIndexLoading = () =>
  new AppError(503, 'SearchIndexLoading', 'the search index is still loading; try again shortly', { headers: { 'Retry-After': '2' } });

/** Turns zod issues into the contract's `errors` list. */
export function fieldErrors(issues: ReadonlyArray<{ path: PropertyKey[]; code: string; message: string }>, prefix?: string) {
  return issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter((p) => p !== undefined && p !== '').join('.'),
    code: issue.code,
    message: issue.message,
  }));
}
