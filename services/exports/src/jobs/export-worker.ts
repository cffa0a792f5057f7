import { randomUUID } from 'node:crypto';
import { type Bus, backoff, ensureStream, eventBody, internalRequestId, sleeper } from '@kn/bus';
import { AppError, EventEnvelope, events } from '@kn/contracts';
import type { Db } from '@kn/db';
import type { Logger } from '@kn/telemetry';
import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { ExportsConfig } from '../config.ts';
import type { ExportsSchema } from '../db/schema.ts';
import type { ExportFiles } from '../domain/files.ts';
import { claimRun, failJob, finishRun } from '../domain/jobs.ts';
import { runExport } from '../domain/run.ts';

export const WORKER_DURABLE = 'exports-worker';
const SUBJECT = 'exports.export.requested.v1';

export interface ExportWorker {
  /** Jobs this instance is running now. */
  running(): number;
  stop(): Promise<void>;
}

/**
 * The export workers: one durable JetStream consumer of `exports.export.requested.v1` shared by
 * every instance, so any instance may take a job and each job goes to one at a time. A worker
 * pulls one job per free slot, reports progress (in-progress acks) while it writes, and
 * acknowledges once the job is finished. A worker that dies stops reporting: after
 * EXPORT_ACK_WAIT_MS JetStream hands the job to another, which starts a new run; only the run
 * that owns the job's current object can finish it, so the job succeeds (and announces it) once.
 * Stopping an instance aborts its runs and hands their jobs back at once.
 *
 * Not `startConsumer` of @kn/bus: that handles an event inside one short transaction, while an
 * export runs for minutes outside any transaction. Nor `followStream`: its pulls ask ahead, and a
 * job pulled ahead would wait unreported behind the one a slot runs.
 */
export async function startExportWorker(deps: {
  bus: Bus;
  db: Db<ExportsSchema>;
  config: ExportsConfig;
  logger: Logger;
  files: ExportFiles;
}): Promise<ExportWorker> {
  const { bus, db, config } = deps;
  const log = deps.logger.child({ component: 'export-worker' });
  const stream = bus.streamName('exports');
  await ensureStream(bus, 'exports');
  const consumerConfig = {
    durable_name: WORKER_DURABLE,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: bus.subject(SUBJECT),
    ack_wait: config.EXPORT_ACK_WAIT_MS * 1_000_000,
    max_deliver: -1,
  };
  try {
    const info = await bus.jsm.consumers.info(stream, WORKER_DURABLE);
    if (info.config.ack_wait !== consumerConfig.ack_wait)
      await bus.jsm.consumers.update(stream, WORKER_DURABLE, { ack_wait: consumerConfig.ack_wait });
  } catch {
    await bus.jsm.consumers.add(stream, consumerConfig).catch((err) => {
      if (!String(err.message).includes('already in use')) throw err;
    });
  }

  // Ended by stop: a slot waiting to pull again after a failure stops at once.
  const pause = sleeper();
  const controllers = new Set<AbortController>();
  const fetches = new Set<ConsumerMessages>();

  async function handle(msg: JsMsg) {
    let body: Awaited<ReturnType<typeof eventBody>>;
    try {
      body = await eventBody(bus, 'exports', msg);
    } catch (err) {
      log.warn({ err, seq: msg.seq }, 'export request could not be read; will retry');
      msg.nak(1000);
      return;
    }
    let exportId: number;
    try {
      const envelope = EventEnvelope.parse(body.json());
      exportId = events[SUBJECT].parse(envelope.data).export.export_id;
    } catch (err) {
      log.error({ err, seq: msg.seq }, 'not an export request; terminated');
      msg.term();
      return;
    }
    const controller = new AbortController();
    controllers.add(controller);
    const heartbeat = setInterval(() => msg.working(), Math.max(250, Math.floor(config.EXPORT_ACK_WAIT_MS / 3)));
    const object = `export-${exportId}-${randomUUID()}`;
    let claimed = false;
    try {
      const run = await claimRun(db, exportId, object);
      if (!run) {
        // Finished already (a redelivery after the final write): nothing to do.
        msg.ack();
        return;
      }
      claimed = true;
      if (run.previousObject) await deps.files.remove(run.previousObject);
      if (run.job.attempts > config.EXPORT_MAX_ATTEMPTS) {
        await failJob(db, exportId, `gave up after ${config.EXPORT_MAX_ATTEMPTS} runs that did not finish`);
        msg.ack();
        return;
      }
      log.info({ export_id: exportId, kind: run.job.kind, attempt: run.job.attempts }, 'export started');
      const started = Date.now();
      const result = await runExport({ bus, config, files: deps.files }, run.job, object, {
        signal: controller.signal,
        requestId: internalRequestId(),
        onProgress: () => msg.working(),
      });
      if (await finishRun(db, exportId, object, result)) {
        log.info({ export_id: exportId, ...result, ms: Date.now() - started }, 'export finished');
      } else {
        // Another run owns the job now (this one was taken for dead): its file is the one.
        await deps.files.remove(object);
      }
      msg.ack();
    } catch (err) {
      if (claimed) await deps.files.remove(object);
      if (controller.signal.aborted) {
        // This instance is stopping: another takes the job at once.
        log.info({ export_id: exportId }, 'export interrupted; handed back');
        msg.nak();
        return;
      }
      const attempt = msg.info.deliveryCount;
      const permanent = err instanceof AppError && err.status < 500;
      if (permanent || attempt >= config.EXPORT_MAX_ATTEMPTS) {
        log.error({ err, export_id: exportId, attempt }, 'export failed');
        await failJob(db, exportId, (err as Error).message || 'export failed', claimed ? object : undefined).catch((e) =>
          log.error({ err: e, export_id: exportId }, 'could not record the failure'),
        );
        msg.ack();
      } else {
        const delay = backoff(attempt, 1000, 60_000);
        log.warn({ err, export_id: exportId, attempt, delay }, 'export run failed; will retry');
        msg.nak(delay);
      }
    } finally {
      clearInterval(heartbeat);
      controllers.delete(controller);
    }
  }

  async function slot() {
    while (!pause.stopped) {
      try {
        const consumer = await bus.js.consumers.get(stream, WORKER_DURABLE);
        const batch = await consumer.fetch({ max_messages: 1, expires: 5000 });
        fetches.add(batch);
        try {
          for await (const msg of batch) {
            if (pause.stopped) {
              msg.nak();
              break;
            }
            await handle(msg);
          }
        } finally {
          fetches.delete(batch);
        }
      } catch (err) {
        if (!pause.stopped) log.warn({ err: (err as Error).message }, 'export worker interrupted; resuming');
        await pause.sleep(1000);
      }
    }
  }
  const slots = Array.from({ length: config.EXPORT_CONCURRENCY }, () => slot());

  return {
    running: () => controllers.size,
    stop: async () => {
      pause.stop();
      for (const batch of fetches) batch.stop();
      for (const controller of controllers) controller.abort(new Error('the exports service is stopping'));
      await Promise.all(slots);
    },
  };
}
