// The part of oidc-provider's interface the gateway uses (the package ships no types).
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string };
    params: Record<string, unknown> & { client_id: string; redirect_uri?: string; scope?: string };
    session?: { accountId?: string };
  }

  export interface AccessToken {
    accountId: string;
    clientId: string;
    aud?: string | string[];
    grantId?: string;
    scope?: string;
    isExpired: boolean;
  }

  export class Grant {
    constructor(options: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    Grant: typeof Grant;
    AccessToken: { find(value: string): Promise<AccessToken | undefined> };
    Client: { find(id: string): Promise<{ clientName?: string; clientId: string } | undefined> };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: Record<string, unknown>,
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): void;
  }

  export const errors: { InvalidTarget: new (description?: string) => Error };
}
