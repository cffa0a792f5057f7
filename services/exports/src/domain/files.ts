import { hash } from 'node:crypto';
import { Readable } from 'node:stream';
import { type Bus, objectStore } from '@kn/bus';
import { exportBucket } from '@kn/contracts';
import type { Logger } from '@kn/telemetry';
import { CONTENT_EXPORT_XSD } from './xsd.ts';

/**
 * Export files in the JetStream object store: the bytes in the exports service's own bucket
 * (`<ns>_EXPORTS_FILES`, no age limit: files are kept indefinitely), readable by every instance;
 * the gateway streams downloads from it (`bucket: 'exports'` in the download answer).
 */
export function exportFiles(bus: Bus, logger: Logger) {
  const files = objectStore(bus, exportBucket(bus.streamName('exports')));

  return {
    /** Streams the file into the bucket; an abort or a failing source ends the write and leaves no object. */
    async put(object: string, source: Readable, signal: AbortSignal) {
      const abort = () => source.destroy(signal.reason instanceof Error ? signal.reason : new Error('export aborted'));
      signal.addEventListener('abort', abort, { once: true });
      try {
        const info = await (await files()).put({ name: object }, Readable.toWeb(source) as unknown as ReadableStream<Uint8Array>);
        return { size: info.size };
      } finally {
        signal.removeEventListener('abort', abort);
      }
    },

    /** Removes a file (a run that lost the race, or the leftovers of a run that died). */
    async remove(object: string) {
      try {
        await (await files()).delete(object);
      } catch (err) {
        logger.warn({ err, object }, 'could not delete an export object');
      }
    },

    /** Stores the XSD (named by its hash, so a changed schema is a new object). */
    async ensureSchema() {
      const bytes = Buffer.from(CONTENT_EXPORT_XSD);
      const object = `schema/content_export-${hash('sha256', bytes).slice(0, 16)}.xsd`;
      const store = await files();
      if (!(await store.info(object))) await store.putBlob({ name: object }, bytes);
      return { object, size: bytes.length };
    },
  };
}

export type ExportFiles = ReturnType<typeof exportFiles>;
