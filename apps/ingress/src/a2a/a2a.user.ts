import type { User } from '@a2a-js/sdk/server';

/** The A2A caller: the tenant its API key belongs to (or the default tenant in development mode). */
export class A2AUser implements User {
  constructor(readonly tenant: string, private readonly authenticated: boolean) {}

  get isAuthenticated(): boolean {
    return this.authenticated;
  }

  get userName(): string {
    return this.tenant;
  }
}
