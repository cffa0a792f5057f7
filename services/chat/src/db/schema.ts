import type { BusTables } from '@kn/bus';
import type { Json } from '@kn/db';
import type { Generated, Selectable } from 'kysely';

/** A Slack workspace or a Teams tenant the app was used from (recorded on its first request). */
export interface InstallationsTable {
  id: Generated<number>;
  platform: 'slack' | 'teams';
  /** Slack's team id, Teams' tenant id. */
  workspace: string;
  /** Teams: the Bot Framework address its conversations are reached at. */
  service_url: string | null;
  created: Generated<Date>;
}

/** A chat user and the network user the app acts for; without a row the app acts for nobody. */
export interface LinksTable {
  id: Generated<number>;
  installation_id: number;
  chat_user_id: string;
  user_id: number;
  /** Teams: the personal conversation with the bot (where its messages to the person go). */
  conversation_id: string | null;
  created: Generated<Date>;
}

/** A link the app gave an unlinked chat user: whoever signs in to the web app with it is linked. */
export interface LinkCodesTable {
  /** sha256 of the code; the code itself is only in the link. */
  code_hash: string;
  installation_id: number;
  chat_user_id: string;
  /** The chat user's and the workspace's names as the platform's request gave them (shown before linking). */
  chat_user_name: string | null;
  workspace_name: string | null;
  conversation_id: string | null;
  expires: Date;
}

/** What the chat needs of users: the e-mail (linking by verified e-mail) and the roles it acts with. */
export interface UserProjectionTable {
  id: number;
  email: string;
  roles: string[];
  is_deleted: boolean;
}

/** The chat half of a person's per-type choice (the e-mail half is the users service's e-mail setting). */
export interface ChatSettingsTable {
  user_id: number;
  chat: Json<Record<string, boolean>>;
}

/** Signatures of the platform requests served within their validity window: a replay is refused. */
export interface SeenRequestsTable {
  signature: string;
  seen: Date;
}

/** Who a question was put to (routing, forwards): "not me" moves on to someone not in here. */
export interface RoutingsTable {
  question_id: number;
  user_id: number;
}

/** Questions asked from a chat message or button: a second click does not ask twice. */
export interface AsksTable {
  source: string;
  question_id: number;
  created: Generated<Date>;
}

/**
 * What the app posts, in one table: the outbox (pending until the platform took it, retried with
 * its Retry-After) and, once sent, where it is (channel, ts) so that a later change edits it.
 */
export interface MessagesTable {
  id: Generated<number>;
  /** The idempotency key: event and recipient (or action); a second insert of it is dropped. */
  key: string;
  installation_id: number;
  /** The chat user (Slack: the DM is opened on their id) or conversation. */
  recipient: string;
  /**
   * Teams: the chat user whose personal chat with the bot this goes to when none was recorded yet
   * (`recipient` is then their id): the sender creates the chat first and records it on the link.
   */
  personal_of: string | null;
  /** post, ephemeral, update (of the message whose key is `edits`), unfurl. */
  kind: 'post' | 'ephemeral' | 'update' | 'unfurl';
  edits: string | null;
  question_id: number | null;
  payload: Json<Record<string, unknown>>;
  status: Generated<'pending' | 'sent' | 'failed'>;
  attempts: Generated<number>;
  next_attempt: Generated<Date>;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  channel: string | null;
  ts: string | null;
  created: Generated<Date>;
  sent: Date | null;
}

export interface ChatSchema extends BusTables {
  installations: InstallationsTable;
  links: LinksTable;
  link_codes: LinkCodesTable;
  user_projection: UserProjectionTable;
  chat_settings: ChatSettingsTable;
  seen_requests: SeenRequestsTable;
  routings: RoutingsTable;
  asks: AsksTable;
  messages: MessagesTable;
}

export type MessageRow = Selectable<MessagesTable>;
export type LinkRow = Selectable<LinksTable>;
