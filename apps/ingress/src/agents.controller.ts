import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiCommonResponses } from './openapi';
import { Bus, ChorusClient, isStreamMissing, NoRespondersError, ServiceDirectory } from '@chorus/bus';
import { QueryParams } from './query-params.guard';
import { INGRESS_OPTIONS, type IngressOptions } from './ingress.options';
import { Tenant, type TenantScope } from './tenant.guard';

interface AgentWindow {
  agent: string;
  count: number;
  errors: number;
  error_rate: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

/** What `GET /v1/agents` answers. */
export interface AgentsReply {
  agents: Array<{
    name: string;
    instances: number;
    /** `degraded`: instances answer, but none does the agent's work (the hub: no replica holds its lease); `warnings` says why. */
    health: 'up' | 'down' | 'degraded';
    /** What an operator should know of it (why it is degraded); empty when nothing. */
    warnings: string[];
    consumers: Array<{ name: string; pending: number; in_flight: number; redelivered: number; waiting_pulls: number }>;
    window: Omit<AgentWindow, 'agent'> | null;
  }>;
  profiles: Array<{
    name: string;
    instances: number;
    health: 'up' | 'down';
    description: string;
    metadata: Record<string, string>;
    requests: number;
    errors: number;
    average_ms: number | null;
    /** What an operator should fix: replicas that search different corpora answer the same query differently. */
    warnings: string[];
  }>;
  /** Per-agent statistics cover this window (ms); null when they could not be read. */
  window_ms: number | null;
  /** Why the per-agent statistics are missing (the hub did not answer), or null: no window is not "no steps". */
  window_error: string | null;
}

const AGENTS = ['hub', 'intent', 'planner', 'search', 'responder'];

/** The hub's warning when replicas answer discovery but none is active (a lease lost to a full store or a partition, or a takeover under way). */
const NO_ACTIVE_HUB =
  'no hub replica is active (none holds the lease): workflows are not being recorded, ended or timed out until one is; a replica takes the lease within CHORUS_HUB_LEASE_MS unless NATS refuses it (see its log)';

@ApiTags('operations')
@ApiCommonResponses()
@Controller('v1/agents')
export class AgentsController {
  /** Keeps a busy instance that answers discovery late, and lists a service whose instances all died. */
  private readonly directory: ServiceDirectory;

  constructor(
    private readonly bus: Bus,
    private readonly client: ChorusClient,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
  ) {
    this.directory = new ServiceDirectory(bus);
  }

  /**
   * The agents and profiles that answer discovery now (instances, health), each agent's durable
   * consumers (backlog, in flight) and its step statistics from the hub (count, error rate, p50/p99).
   * With an API key, the step statistics are those of the key's tenant's steps; the rest (instances,
   * health, backlog, the profile services' counters) is the deployment's, shared by every tenant.
   */
  @Get()
  @QueryParams()
  @ApiOperation({ summary: 'Agents and profiles: instances, health, backlog, latency' })
  @ApiResponse({ status: 200, description: '`{agents, profiles, window_ms, window_error}`: per agent its instances, health (up, down, or degraded: the hub replicas answer but none is active), warnings, consumers and step statistics; per profile its instances, health, counters and warnings' })
  async agents(@Tenant() scope: TenantScope): Promise<AgentsReply> {
    const [services, consumers, read] = await Promise.all([
      this.directory.discover(),
      this.consumers(),
      this.client.stats<{ agents: AgentWindow[]; window_ms: number }>(scope.authenticated ? scope.tenant : undefined).catch((e: Error) => e),
    ]);
    const stats = read instanceof Error ? null : read;
    const windowError = read instanceof Error ? `step statistics unavailable: they could not be read from the hub (${read.message})` : null;
    const names = [...new Set([...AGENTS, ...services.filter((s) => s.kind === 'agent').map((s) => s.name)])].sort();
    const agents = names.map((name) => {
      const service = services.find((s) => s.kind === 'agent' && s.name === name);
      const instances = service?.instances.length ?? 0;
      const window = stats?.agents.find((a) => a.agent === name);
      // Only the hub replica that holds the lease answers stats: none answering means none records workflows.
      const warnings = name === 'hub' && instances > 0 && read instanceof NoRespondersError ? [NO_ACTIVE_HUB] : [];
      return {
        name,
        instances,
        health: instances === 0 ? ('down' as const) : warnings.length > 0 ? ('degraded' as const) : ('up' as const),
        warnings,
        consumers: consumers.filter((c) => c.name.startsWith(`${name}_`)),
        window: window ? { count: window.count, errors: window.errors, error_rate: window.error_rate, p50_ms: window.p50_ms, p99_ms: window.p99_ms } : null,
      };
    });
    // Every configured profile is listed, running or not: one that died is a lens the workflows lose.
    const configured = this.options.profiles
      .filter((name) => !services.some((s) => s.kind === 'profile' && s.name === name))
      .map((name) => ({ name, kind: 'profile' as const, description: '', metadata: {}, instances: [] }));
    const profiles = [...services.filter((s) => s.kind === 'profile'), ...configured]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((s) => {
        const requests = s.instances.reduce((a, i) => a + i.requests, 0);
        const corpora = [...new Set(s.instances.map((i) => `${i.metadata.corpus ?? 'unknown corpus'} (${i.metadata.documents ?? '?'} ${i.metadata.documents === '1' ? 'document' : 'documents'})`))];
        const weighted = s.instances.reduce((a, i) => a + (i.average_ms ?? 0) * i.requests, 0);
        return {
          name: s.name,
          instances: s.instances.length,
          health: s.instances.length > 0 ? ('up' as const) : ('down' as const),
          description: s.description,
          metadata: s.metadata,
          requests,
          errors: s.instances.reduce((a, i) => a + i.errors, 0),
          average_ms: requests > 0 ? weighted / requests : null,
          warnings: corpora.length > 1 ? [`its instances search different corpora, so one query gets different answers: ${corpora.join('; ')}`] : [],
        };
      });
    return { agents, profiles, window_ms: stats?.window_ms ?? null, window_error: windowError };
  }

  private async consumers() {
    const out: AgentsReply['agents'][number]['consumers'] = [];
    const stream = this.bus.options.workflowStream;
    try {
      for await (const c of this.bus.jsm.consumers.list(stream)) {
        out.push({
          name: c.name,
          pending: c.num_pending,
          in_flight: c.num_ack_pending,
          redelivered: c.num_redelivered,
          waiting_pulls: c.num_waiting,
        });
      }
    } catch (e) {
      // A NATS server that lost its store (restarted without it) or a deleted stream: this was a 500 "internal error".
      if (!isStreamMissing(e)) throw e;
      throw new ServiceUnavailableException(`the workflow stream ${stream} does not exist on the NATS server (deleted, or the server restarted without its store): nothing can run until it does; a running hub makes it again within seconds (start one if none runs)`);
    }
    return out;
  }
}
