import type { ErrorBody, ErrorCode } from '@kn/contracts';
import { errorStatuses } from './routes.ts';

/**
 * An answer of the API that is not a success: its status, the error body of the contract (code,
 * message, the fields that failed), and where to look it up (the request id).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly body: ErrorBody;
  /** Name it when reporting a problem: the gateway logs under it. */
  readonly requestId: string | null;
  readonly headers: Headers;
  /** The operation that was called (`createQuestion`). */
  readonly operation: string;

  constructor(operation: string, status: number, body: ErrorBody, headers: Headers) {
    super(`${operation}: ${status} ${body.code}: ${body.message}`);
    this.name = 'ApiError';
    this.operation = operation;
    this.status = status;
    this.code = body.code;
    this.body = body;
    this.headers = headers;
    this.requestId = headers.get('x-request-id');
  }

  /** The fields that failed validation (400 ValidationError, 422 PublishValidationError). */
  get fields() {
    return this.body.errors ?? [];
  }

  /** Whether the error has this code: `if (err instanceof ApiError && err.is('NotFound'))`. */
  is(code: ErrorCode): boolean {
    return this.code === code;
  }
}

/** The error body of an answer; a body not in the contract's shape (a proxy's page, say) is described by its status. */
export function errorBodyOf(status: number, text: string): ErrorBody {
  try {
    const body = JSON.parse(text) as ErrorBody;
    if (body && typeof body.code === 'string' && body.code in errorStatuses && typeof body.message === 'string') return body;
  } catch {}
  const code = (Object.entries(errorStatuses).find(([, s]) => s === status)?.[0] ??
    (status >= 500 ? 'InternalError' : 'ValidationError')) as ErrorCode;
  return { code, message: text.slice(0, 500) || `HTTP ${status}` };
}
