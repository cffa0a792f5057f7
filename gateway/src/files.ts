import { createHash, randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { type Bus, call, objectStore } from '@kn/bus';
import {
  AppError,
  attachmentBucket,
  exportBucket,
  fileTooLarge,
  notFound,
  type Operation,
  unsupportedMediaType,
  validationError,
} from '@kn/contracts';
import type { Logger } from '@kn/telemetry';
import busboy from 'busboy';
import type { Request, Response } from 'express';
import { type Authenticate, authorize, parsePart } from './request.ts';

/**
 * File transfer for operations marked `http.upload` or `http.download`. The generic route speaks
 * JSON only; these stream bytes between the client and the JetStream object store (which every
 * instance of every service can read), and hand the service only the metadata.
 */
export interface FileRoutesOptions {
  bus: Bus;
  logger: Logger;
  maxBytes: number;
  rpcTimeoutMs: number;
  authenticate: Authenticate;
}

export function fileRoutes(options: FileRoutesOptions) {
  const { bus, logger } = options;
  const openStore = objectStore(bus, attachmentBucket(bus.streamName('content')));
  const openExports = objectStore(bus, exportBucket(bus.streamName('exports')));

  /** Streams the multipart field `file` into the object store; resolves once the request is fully read. */
  function receive(req: Request, objectName: string) {
    return new Promise<{ name: string; mimeType: string; size: number; hash: string; truncated: boolean } | null>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({
          headers: req.headers,
          // Browsers and HTTP libraries send the file name as raw UTF-8 (busboy reads Latin-1 by default).
          defParamCharset: 'utf8',
          limits: { files: 1, fileSize: options.maxBytes + 1, fields: 20, parts: 40 },
        });
      } catch {
        reject(unsupportedMediaType('send the file as multipart/form-data in the field "file"'));
        return;
      }
      let currentPass: PassThrough | undefined;
      let pending: Promise<{ name: string; mimeType: string; size: number; hash: string; truncated: boolean }> | undefined;
      // The body is the one field `file` (the OpenAPI document says so): any other part is refused,
      // the file read on to the end so that the client gets the answer.
      const other = (what: string) =>
        abort(
          validationError(`the body has ${what}: send only the field "file"`, [
            { path: 'body', code: 'unrecognized_keys', message: `only the field "file", not ${what}` },
          ]),
        );
      parser.on('field', (field) => other(`a field ${JSON.stringify(field)}`));
      // busboy takes one file (limits.files) and reports a second instead of reading it.
      parser.on('filesLimit', () => other('a second file'));
      parser.on('file', (field, file, info) => {
        if (field !== 'file' || pending) {
          file.on('error', () => {});
          file.resume();
          other(field === 'file' ? 'a second file' : `a field ${JSON.stringify(field)}`);
          return;
        }
        const hash = createHash('sha256');
        let size = 0;
        let truncated = false;
        file.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          size += chunk.length;
        });
        // busboy stops at maxBytes + 1: reaching that means the file is over the limit.
        file.on('limit', () => {
          truncated = true;
        });
        const pass = new PassThrough();
        currentPass = pass;
        // A body cut off mid-file errors the file stream; it must end the store write, not the process.
        file.on('error', (err) => pass.destroy(err));
        pass.on('error', () => {});
        file.pipe(pass);
        pending = openStore()
          .then((s) => s.put({ name: objectName }, Readable.toWeb(pass) as unknown as ReadableStream<Uint8Array>))
          .then(() => ({
            name: cleanName(info.filename),
            mimeType: (info.mimeType || 'application/octet-stream').slice(0, 255),
            size,
            hash: hash.digest('hex'),
            truncated,
          }))
          .catch((err) => {
            // Keep reading the request so the client gets our answer instead of a stalled upload.
            file.unpipe(pass);
            file.resume();
            throw err;
          });
        pending.catch(() => {});
      });
      // A broken or abandoned body must also end the object store write, or it would wait for ever.
      const abort = (error: AppError) => {
        currentPass?.destroy(error);
        reject(error);
      };
      parser.on('error', (err) => abort(validationError(`malformed multipart body: ${(err as Error).message}`)));
      req.on('close', () => {
        if (!req.complete) abort(new AppError(400, 'ValidationError', 'request aborted'));
      });
      parser.on('close', () => {
        if (!pending) resolve(null);
        else pending.then(resolve, reject);
      });
      req.pipe(parser);
    });
  }

  async function discard(objectName: string) {
    try {
      await (await openStore()).delete(objectName);
    } catch (err) {
      logger.warn({ err, object: objectName }, 'could not delete an unused upload');
    }
  }

  async function upload(name: string, op: Operation, req: Request, res: Response) {
    const actor = await authorize(options.authenticate, req, op);
    const parsedParams = parsePart(op.params, req.params, 'params');
    if (!req.is('multipart/form-data')) throw unsupportedMediaType('send the file as multipart/form-data in the field "file"');
    const objectName = `${randomUUID()}`;
    let received: Awaited<ReturnType<typeof receive>>;
    try {
      received = await receive(req, objectName);
    } catch (err) {
      await discard(objectName);
      throw err;
    }
    if (!received)
      throw validationError('the request has no file', [
        { path: 'file', code: 'invalid_type', message: 'a file is required in the field "file"' },
      ]);
    if (received.truncated || received.size > options.maxBytes) {
      await discard(objectName);
      throw fileTooLarge(`files may have at most ${options.maxBytes} bytes`);
    }
    if (received.size === 0) {
      await discard(objectName);
      throw validationError('the file is empty', [{ path: 'file', code: 'too_small', message: 'the file is empty' }]);
    }
    try {
      const result = await call(
        bus,
        name,
        op,
        {
          actor,
          params: parsedParams,
          query: undefined,
          body: { object: objectName, name: received.name, mime_type: received.mimeType, size: received.size, hash: received.hash },
          requestId: req.id,
          url: req.originalUrl,
        } as never,
        { timeoutMs: Math.max(options.rpcTimeoutMs, 60_000) },
      );
      res.status(op.http?.status ?? 201).json(result);
    } catch (err) {
      // The service refused (or did not answer): the bytes must not outlive the failed request.
      if (!(err instanceof AppError && err.status === 503)) await discard(objectName);
      throw err;
    }
  }

  async function download(name: string, op: Operation, req: Request, res: Response) {
    const actor = await authorize(options.authenticate, req, op);
    const file = (await call(
      bus,
      name,
      op,
      {
        actor,
        params: parsePart(op.params, req.params, 'params'),
        query: undefined,
        body: undefined,
        requestId: req.id,
        url: req.originalUrl,
      } as never,
      { timeoutMs: options.rpcTimeoutMs },
    )) as unknown as { object: string; name: string; mime_type: string; size: number; bucket?: 'attachments' | 'exports' };
    const stored = await (await (file.bucket === 'exports' ? openExports() : openStore())).get(file.object);
    if (!stored) throw notFound('attachment file');
    res.status(200);
    res.setHeader('Content-Type', file.mime_type);
    res.setHeader('Content-Length', String(file.size));
    // Never rendered by the browser on our origin: uploaded HTML must not run as our pages.
    res.setHeader('Content-Disposition', contentDisposition(file.name));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    const body = Readable.fromWeb(stored.data as unknown as WebReadableStream<Uint8Array>);
    await new Promise<void>((resolve, reject) => {
      body.on('error', reject);
      res.on('close', resolve);
      body.pipe(res);
    }).catch((err) => {
      logger.warn({ err, request_id: req.id }, 'attachment download broke off');
      res.destroy();
    });
  }

  return {
    handler(name: string, op: Operation) {
      return (req: Request, res: Response) => (op.http?.upload ? upload(name, op, req, res) : download(name, op, req, res));
    },
  };
}

/** The file name without any path, control characters or more than 255 characters. */
function cleanName(filename: string | undefined) {
  const base = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const clean = [...base]
    .filter((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f)
    .join('')
    .trim()
    .slice(0, 255);
  return clean || 'file';
}

/**
 * `attachment` with the name twice (RFC 6266): `filename*` carries it whole as UTF-8 (RFC 8187),
 * `filename` an ASCII stand-in for the few clients that do not read `filename*`.
 */
function contentDisposition(name: string) {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  // encodeURIComponent leaves ' ( ) * as they are; RFC 8187's attr-char does not allow them.
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
