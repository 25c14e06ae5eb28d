import { ServiceError, Svcm, ServiceErrorCodeHeader, ServiceErrorHeader } from '@nats-io/services';
import {
  parseDocumentsRequest,
  parseSearchRequest,
  profileSubject,
  type ProfileDocumentsReply,
  type ProfileDocumentsRequest,
  type ProfileSearchReply,
  type ProfileSearchRequest,
} from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import type { Bus } from './nats.bus';
import { RemoteError } from './bus.errors';
import { PROFILE_ANNOUNCE_SUBJECT, PROFILE_METADATA_KEY, type ProfileAnnouncement } from './profile.registry';
import { fieldErrorsOf, requestHedged, toRequestError } from './request-reply';

export interface ProfileServiceDefinition {
  /** Profile name; also the NATS service name. */
  name: string;
  version: string;
  description: string;
  /** Shown by `$SRV.INFO` (corpus, document count, analyzer, …). */
  metadata: Record<string, string>;
  search(request: ProfileSearchRequest): Promise<ProfileSearchReply> | ProfileSearchReply;
  documents(request: ProfileDocumentsRequest): Promise<ProfileDocumentsReply> | ProfileDocumentsReply;
}

/** The queue group every replica of a profile joins, so each request is served once. */
const PROFILE_QUEUE = 'chorus-profile';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Registers a profile as a NATS service (`@nats-io/services`): discovery, health and stats through
 * `$SRV.PING|INFO|STATS.<name>`, and two endpoints, `search` and `documents`, whose replicas share
 * a queue group.
 */
export async function startProfileService(bus: Bus, def: ProfileServiceDefinition, log: Logger): Promise<{ stop(): Promise<void> }> {
  const service = await new Svcm(bus.nc).add({
    name: def.name,
    version: def.version,
    description: def.description,
    metadata: { ...def.metadata, [PROFILE_METADATA_KEY]: 'true' },
    queue: PROFILE_QUEUE,
  });
  const endpoint = (name: 'search' | 'documents', handle: (req: unknown) => unknown) => {
    service.addEndpoint(name, {
      subject: profileSubject(def.name, name),
      handler: (err, msg) => {
        if (err) {
          log.error({ err, profile: def.name, endpoint: name }, 'profile endpoint failed');
          return;
        }
        // The body is parsed, and the handler checks it, inside the service's own callback: what is
        // thrown there @nats-io/services answers and counts in the endpoint's $SRV.STATS, which an
        // error answered later, from a promise, would not be.
        let answer: unknown;
        try {
          answer = handle(JSON.parse(decoder.decode(msg.data)));
        } catch (e) {
          throw toServiceError(e, () => log.error({ err: e, profile: def.name, endpoint: name }, 'profile request failed'));
        }
        void (async () => {
          try {
            msg.respond(encoder.encode(JSON.stringify(await answer)));
          } catch (e) {
            const error = toServiceError(e, () => log.error({ err: e, profile: def.name, endpoint: name }, 'profile request failed'));
            msg.respondError(error.code, error.message);
          }
        })().catch((e) => log.error({ err: e, profile: def.name, endpoint: name }, 'profile request could not be answered'));
      },
    });
  };
  // Each request is checked as it arrives, so a definition is handed only what its endpoint takes.
  endpoint('search', (r) => def.search(parseSearchRequest(r)));
  endpoint('documents', (r) => def.documents(parseDocumentsRequest(r)));
  const announcement: ProfileAnnouncement = { name: def.name, id: service.info().id, version: def.version, description: def.description };
  bus.nc.publish(PROFILE_ANNOUNCE_SUBJECT, encoder.encode(JSON.stringify(announcement)));
  return {
    stop: async () => {
      await service.stop();
    },
  };
}

/**
 * A profile's failure as a service error: 400 for a body that is not JSON or a request the handler
 * refused (an error listing its invalid fields), the caller's mistake; 500, logged, for the rest.
 */
function toServiceError(e: unknown, logFault: () => void): ServiceError {
  if (e instanceof SyntaxError) return new ServiceError(400, `request is not valid JSON: ${e.message}`);
  if (fieldErrorsOf(e)) return new ServiceError(400, (e as Error).message);
  logFault();
  return new ServiceError(500, e instanceof Error ? e.message : 'profile request failed');
}

/** How many tries a hedged profile request makes at most, the first included. */
const PROFILE_MAX_TRIES = 8;

/**
 * Calls profile services by name. NATS hands each request to one replica of the profile's queue
 * group at random, and a replica that is stopped or hung but still connected keeps its share for
 * minutes: with `hedgeAfterMs`, a request not answered by then is sent again (to whichever replica
 * NATS picks), every `hedgeAfterMs` while the timeout allows, up to eight tries, and the first answer
 * wins. With one of two replicas hung, a request is lost only if every try went to it (1 in 2^tries),
 * where it was lost one time in two. A profile that is merely slow pays a copy per try.
 */
export class ProfileClient {
  constructor(
    private readonly bus: Bus,
    private readonly options: { hedgeAfterMs?: number } = {},
  ) {}

  search(profile: string, request: ProfileSearchRequest, timeoutMs: number, signal?: AbortSignal): Promise<ProfileSearchReply> {
    return this.call(profileSubject(profile, 'search'), request, timeoutMs, signal);
  }

  documents(profile: string, request: ProfileDocumentsRequest, timeoutMs: number, signal?: AbortSignal): Promise<ProfileDocumentsReply> {
    return this.call(profileSubject(profile, 'documents'), request, timeoutMs, signal);
  }

  private async call<T>(subject: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<T> {
    let msg;
    try {
      signal?.throwIfAborted();
      const data = encoder.encode(JSON.stringify(body));
      const timeout = Math.max(1, timeoutMs);
      const hedge = this.options.hedgeAfterMs ?? 0;
      // A profile's reply is final, an error included: only silence is tried again.
      msg = hedge > 0 ? await requestHedged(this.bus, subject, data, timeout, hedge, PROFILE_MAX_TRIES, () => false) : await this.bus.nc.request(subject, data, { timeout });
    } catch (e) {
      throw toRequestError(e, subject, timeoutMs);
    }
    const errorText = msg.headers?.get(ServiceErrorHeader);
    if (errorText) {
      const code = msg.headers?.get(ServiceErrorCodeHeader) ?? '500';
      throw new RemoteError(subject, `PROFILE_ERROR_${code}`, errorText, code.startsWith('5'));
    }
    return JSON.parse(decoder.decode(msg.data)) as T;
  }
}

