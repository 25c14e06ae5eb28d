export { BusErrorCodes, EnvelopeTooLargeError, IdempotencyKeyExpiredError, IdempotencyKeyReusedError, NatsUnreachableError, NoJetStreamError, NoRespondersError, NotRecordedYetError, RemoteError, RequestTimeoutError, RetryRefusedError, StorageFullError } from './bus.errors';
export { defaultBusOptions, defaultConsumerOptions, type BusOptions, type ConsumerOptions } from './bus.options';
export { ChorusClient, type ChorusClientOptions, type SubmitOptions, type SubmitQuery, type Submitted } from './chorus.client';
export {
  DEAD_LETTER_REASONS,
  MAX_DEAD_LETTER_DATA_BYTES,
  createDeadLetter,
  deadLetterLimit,
  publishDeadLetter,
  readDeadLetters,
  readStoredDeadLetter,
  type DeadLetter,
  type DeadLetterReason,
  type StoredDeadLetter,
  type UnreadableDeadLetter,
} from './dead-letter';
export type { EnvelopeHandler, HandlerContext, HandlerResult, Outbound } from './handler.types';
export { FinishedWorkflows } from './finished-workflows';
export { ChorusHeaders, createHeaders } from './headers';
export { isStreamMissing, isTransient, retryTransient } from './transient-error';
export { LeaderLease, type LeaseOptions } from './leader.lease';
export { SERVICE_USERS, renderAuthorization, serviceInboxPrefix, servicePermissions, type Permissions, type ServiceUser } from './nats.permissions';
export { CountedEvents, type CountedEventsOptions, type EventCounts } from './counted-events';
export { ALL_MESSAGE_TYPES, JetStreamConsumer, durableName, type ConsumerPattern } from './jetstream.consumer';
export { DurableConsumer, createJsonConsumer, ensureDurableConsumer, type DurableConsumerSpec, type JsonMessageMeta } from './durable.consumer';
export { JetStreamTransport, OnEnvelope, RethrowRpcFilter, createAgentApp, startAgent, type AgentAppOptions } from './jetstream.transport';
export { KeyValueStore, isRevisionConflict, type KeyValueStoreOptions, type StoredValue } from './kv.store';
export { Bus, type PublishOptions, type PublishResult } from './nats.bus';
export { NatsServerProcess, findNatsServerBinary, isPortOpen, type NatsServerOptions } from './nats-server.process';
export { ProfileClient, startProfileService, type ProfileServiceDefinition } from './profile.service';
export {
  PROFILE_ANNOUNCE_SUBJECT,
  PROFILE_METADATA_KEY,
  ProfileRegistry,
  defaultProfileRegistryOptions,
  type ProfileAnnouncement,
  type ProfileEntry,
  type ProfileInstance,
  type ProfileRegistryOptions,
} from './profile.registry';
export { HUB_READ, requestReply, serveRequests, type Reply, type RequestOptions, type Responder } from './request-reply';
export { releaseAnsweredRequestsCheaply } from './request-release';
export { coalesceSocketWrites } from './write-coalescing';
export { serveNestPattern, type NestError } from './nest-compat.gateway';
export { endQuietlyWhenOutputCloses, runProcess, runStandalone, type Component, type ProcessOptions, type RunningProcess } from './process.runtime';
export { readWorkflowHistory, type HistoryEntry } from './workflow.history';
export { AGENT_METADATA_KEY, discoverServices, registerAgentService, ServiceDirectory, type DiscoveredService, type ServiceDirectoryOptions } from './service.directory';
export { confirmEnded, terminalStatusOf, watchWorkflow, type WorkflowEvent } from './workflow.watch';
export { requestRetry, type RetryStarted, type RetryTarget } from './workflow.retry';
