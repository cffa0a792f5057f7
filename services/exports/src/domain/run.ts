import { PassThrough, Readable } from 'node:stream';
import type { Bus } from '@kn/bus';
import type { ExportParameters } from '@kn/contracts';
import JSZip from 'jszip';
import type { ExportsConfig } from '../config.ts';
import type { ExportJobRow } from '../db/schema.ts';
import { contentXmlFile } from './content-xml.ts';
import type { ExportFiles } from './files.ts';
import { fileStamp } from './format.ts';
import { sourcePages } from './source.ts';
import { topicContentFile } from './topic-content.ts';

export interface RunDeps {
  bus: Bus;
  config: ExportsConfig;
  files: ExportFiles;
}

/** Chunks between the writer and the store: about one page of output is buffered, whatever the network's size. */
const HIGH_WATER_MARK = 1 << 20;

/**
 * Writes the file of one run of a job into the object store under `object`, streaming from the
 * content service's pages to the bucket. Returns its size and count.
 */
export async function runExport(
  deps: RunDeps,
  job: ExportJobRow,
  object: string,
  options: { signal: AbortSignal; requestId: string; onProgress: () => void },
) {
  const { config, files } = deps;
  const parameters = job.parameters as ExportParameters;
  const stats = { count: 0 };
  const pages = (extra: {
    includeDeleted: boolean;
    includeComments: boolean;
    topics?: Array<{ global_concept_id: string; label: string }>;
  }) =>
    sourcePages({
      bus: deps.bus,
      requestId: options.requestId,
      pageSize: config.EXPORT_PAGE_SIZE,
      pageDelayMs: config.EXPORT_PAGE_DELAY_MS,
      timeoutMs: config.EXPORT_RPC_TIMEOUT_MS,
      signal: options.signal,
      onProgress: options.onProgress,
      ...extra,
    });

  let source: Readable;
  if ('topics' in parameters) {
    // Deleted content never goes into a topic-content file; comments are not part of it.
    const rows = topicContentFile(
      pages({ includeDeleted: false, includeComments: false, topics: parameters.topics }),
      parameters.topics,
      stats,
    );
    source = Readable.from(rows, { objectMode: false, highWaterMark: HIGH_WATER_MARK });
  } else {
    const xml = contentXmlFile(
      pages({ includeDeleted: !parameters.exclude_deleted, includeComments: true }),
      {
        exportId: job.id,
        network: job.network,
        created: job.start_date,
        anonymised: parameters.anonymised,
        excludeDeleted: parameters.exclude_deleted,
      },
      stats,
    );
    const input = Readable.from(xml, { objectMode: false, highWaterMark: HIGH_WATER_MARK });
    const zip = new JSZip();
    // The XML inside is named like the archive without `.zip`.
    zip.file(job.filename.replace(/\.zip$/, '') || `content_export_${fileStamp(job.start_date)}.xml`, input, {
      binary: true,
      date: job.start_date,
    });
    // streamFiles: the entry is written as it is read (data descriptor after it), so nothing waits in memory.
    const archive = zip.generateNodeStream({
      type: 'nodebuffer',
      streamFiles: true,
      compression: 'DEFLATE',
      compressionOptions: { level: config.EXPORT_ZIP_LEVEL },
    });
    // jszip's stream is a readable-stream one: hand it on through a core stream, errors included
    // (a failing source must fail the upload rather than leave it waiting).
    const output = new PassThrough({ highWaterMark: HIGH_WATER_MARK });
    archive.on('error', (err: Error) => output.destroy(err));
    input.on('error', (err) => output.destroy(err));
    output.on('close', () => {
      if (!input.destroyed) input.destroy();
    });
    archive.pipe(output);
    source = output;
  }
  const { size } = await files.put(object, source, options.signal);
  return { size, count: stats.count };
}
