import { type Db, whenLockFree } from '@kn/db';
import { type IntervalJob, intervalJob } from '@kn/service';
import type { Logger } from '@kn/telemetry';
import type { SearchBackend } from '../core/backend.ts';
import type { SearchSchema } from '../db/schema.ts';
import { fitExpertModel } from '../domain/expert-history.ts';
import { defaultModel, type ExpertModel, FEATURES, MIN_EXAMPLES, weightVector } from '../domain/expert-model.ts';
import type { Meaning } from '../domain/semantic.ts';

/**
 * The expert model in force, shared by the instances through the search service's database: every
 * fit's outcome is a row of `expert_models`, the latest is the model, and each instance reads it
 * again every `checkMs`. A fit runs on request (`fit`) and by itself, in the background: when the
 * network has `refitAnswered` more accepted answers than at the last fit, and every `refitMs`.
 * Scheduled fits take a transaction-scoped advisory lock, so one instance fits at a time. A fit
 * that fails keeps the model there was and logs why. `start()` reads the model and starts the
 * schedule.
 */
export class ExpertModels {
  private model: ExpertModel = defaultModel();
  private weightsOfModel = weightVector(this.model);
  private answeredAtFit = 0;
  private fitting: Promise<ExpertModel> | null = null;
  private schedule: IntervalJob<void, number> | null = null;
  private stopped = false;
  private readonly options: {
    db: Db<SearchSchema>;
    backend: SearchBackend;
    logger: Logger;
    checkMs: number;
    refitMs: number;
    refitAnswered: number;
    /** A question's stored meaning (semantic/embeddings.ts), which expert search reads too. */
    meaningOf?: (questionId: number) => Meaning | undefined;
  };

  constructor(options: ExpertModels['options']) {
    this.options = options;
  }

  /** The model in force. */
  current(): ExpertModel {
    return this.model;
  }

  /** Its weights in FEATURES order. */
  weights(): Float64Array {
    return this.weightsOfModel;
  }

  async start() {
    await this.load();
    this.schedule = intervalJob({
      name: 'expert model check',
      everyMs: this.options.checkMs,
      logger: this.options.logger,
      round: (now) => this.round(now ?? Date.now()),
    });
  }

  async stop() {
    this.stopped = true;
    await this.schedule?.stop();
    await this.fitting?.catch(() => {});
  }

  /** Reads the latest model of the database (another instance may have fitted it). */
  private async load() {
    const row = await this.options.db
      .selectFrom('expert_models')
      .select(['model', 'answered'])
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (row) this.use(row.model, row.answered);
  }

  private use(model: ExpertModel, answered: number) {
    this.model = model;
    this.weightsOfModel = weightVector(model);
    this.answeredAtFit = answered;
  }

  /**
   * One round of the schedule: the latest model, and a fit when one is due. An instance's rounds
   * run one after another: a round asked for while the timer's is fitting waits for that fit, then
   * finds the model fitted (it returned at once before, with the model not fitted yet).
   */
  check(now = Date.now()): Promise<void> {
    if (!this.schedule) throw new Error('the expert model schedule has not started');
    return this.schedule.runOnce(now);
  }

  private async round(now: number) {
    await this.load();
    if (this.stopped || !this.options.backend.ready || this.fitting) return;
    const answered = await this.options.backend.acceptedAnswers();
    if (answered < MIN_EXAMPLES) return;
    const fittedAt = this.model.fitted_at ? Date.parse(this.model.fitted_at) : 0;
    const due = now - fittedAt >= this.options.refitMs || answered - this.answeredAtFit >= this.options.refitAnswered;
    if (!due) return;
    await whenLockFree(this.options.db, 'search.expert_model', undefined, async () => {
      await this.fit({ reason: 'scheduled' }).catch(() => {});
    });
  }

  /**
   * Fits the model on everything the network knows before `cutoff` (now by default) and makes it
   * the model in force; one fit at a time (a second call waits for the first). Throws when the fit
   * fails; the model in force stays.
   */
  fit(options: { cutoff?: number; reason?: string } = {}): Promise<ExpertModel> {
    this.fitting ??= this.run(options).finally(() => {
      this.fitting = null;
    });
    return this.fitting;
  }

  private async run(options: { cutoff?: number; reason?: string }): Promise<ExpertModel> {
    const { db, backend, logger } = this.options;
    const started = Date.now();
    const cutoff = options.cutoff ?? started;
    try {
      const answered = await backend.acceptedAnswers();
      const routings = await db
        .selectFrom('routed_experts')
        .select(['user_id', 'routed_at', 'answered_at'])
        .where('routed_at', '<', new Date(cutoff))
        .orderBy('routed_at')
        .orderBy('user_id')
        .execute();
      const history = {
        ...(await backend.history(cutoff)),
        routings: routings.map((r) => ({ user_id: r.user_id, time: r.routed_at.getTime(), answered_at: r.answered_at?.getTime() ?? null })),
      };
      const model = await fitExpertModel(history, Date.now(), undefined, this.options.meaningOf);
      const bad = FEATURES.filter((f) => !Number.isFinite(model.weights[f]));
      if (bad.length) throw new Error(`the fit gave no finite weight for ${bad.join(', ')}`);
      await db
        .insertInto('expert_models')
        .values({ model: JSON.stringify(model), answered })
        .execute();
      this.use(model, answered);
      logger.info(
        {
          reason: options.reason ?? 'requested',
          ms: Date.now() - started,
          questions: model.questions,
          status: model.status,
          validation: model.validation,
        },
        'expert model fitted',
      );
      return model;
    } catch (err) {
      logger.error({ err, reason: options.reason ?? 'requested' }, 'expert model fit failed; the model in force stays');
      throw err;
    }
  }
}
