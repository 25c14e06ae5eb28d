/** What the HTTP layer needs to know besides the client. */
export interface IngressOptions {
  maxDeadlineMs: number;
  /** How long after a workflow's deadline an event stream waits for the hub to confirm its end. */
  watchGraceMs: number;
  /** API key → tenant; empty for development mode. */
  apiKeys: Readonly<Record<string, string>>;
  /** The profiles this deployment is configured with (CHORUS_PROFILES): listed by `GET /v1/agents` even with no instance. */
  profiles: readonly string[];
  /** Aborted when the ingress shuts down: event streams end and `?wait=true` answers at once. */
  closing: AbortSignal;
}

export const INGRESS_OPTIONS = Symbol('INGRESS_OPTIONS');
