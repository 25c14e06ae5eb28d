/** What the HTTP layer needs to know besides the client. */
export interface IngressOptions {
  defaultTenant: string;
  maxDeadlineMs: number;
}

export const INGRESS_OPTIONS = Symbol('INGRESS_OPTIONS');
