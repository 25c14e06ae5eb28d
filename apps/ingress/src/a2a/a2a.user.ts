import type { User } from '@a2a-js/sdk/server';

/**
 * The A2A caller: the tenant its API key belongs to (or the default tenant in development mode), and
 * `gone`, aborted when its HTTP response closes (sent, or the client left), which the SDK does not
 * tell a request handler, or when the ingress shuts down: a stream that follows a workflow for it
 * stops there.
 */
export class A2AUser implements User {
  constructor(
    readonly tenant: string,
    private readonly authenticated: boolean,
    readonly gone?: AbortSignal,
  ) {}

  get isAuthenticated(): boolean {
    return this.authenticated;
  }

  get userName(): string {
    return this.tenant;
  }
}
