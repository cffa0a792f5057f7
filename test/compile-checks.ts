// Type-checked by `pnpm typecheck`, never run: lists that must change together fail to compile
// when one of them is left behind. Each `@ts-expect-error` is a mistake the compiler must refuse
// (were it accepted, the unused directive would be the error).
import type { EventHandler, EventHandlers } from '@kn/bus';
import type { EmailSettingOf } from '../services/notifications/src/domain/settings.ts';

declare const handle: <S extends 'users.user.created.v1' | 'users.user.updated.v1' | 'users.user.deleted.v1'>() => EventHandler<S>;

// A consumer of the users stream that forgot an event of it.
// @ts-expect-error users.settings.updated.v1 and users.network-settings.updated.v1 are neither handled nor ignored
export const forgotten: EventHandlers<'users'> = {
  'users.user.created.v1': handle(),
  'users.user.updated.v1': handle(),
  'users.user.deleted.v1': handle(),
};

// The same consumer saying that it ignores them compiles.
export const ignoring: EventHandlers<'users', 'users.settings.updated.v1' | 'users.network-settings.updated.v1'> = {
  'users.user.created.v1': handle(),
  'users.user.updated.v1': handle(),
  'users.user.deleted.v1': handle(),
};

// A notification type without the email setting that governs it.
// @ts-expect-error solution_expired has no email setting
export const unmapped: EmailSettingOf = {
  validation_new_expert: 'validation_request',
  question_changed_to_solution_author: 'question_edited',
  solution_changed_to_question_poser: 'solution_edited',
  solution_changed_to_solution_rater: 'solution_edited',
};
