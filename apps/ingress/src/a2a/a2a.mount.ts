import { AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { HttpException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ChorusClient, discoverServices, type Bus } from '@chorus/bus';
import type { Logger } from '@chorus/observability';
import { ApiKeys, resolveTenant } from '../tenant.guard';
import { A2AUser } from './a2a.user';
import { ChorusExecutor } from './chorus.executor';
import { ChorusTaskStore } from './chorus.task-store';

export const A2A_PATH = '/a2a';
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
const CARD_TTL_MS = 5_000;

/**
 * The A2A surface (protocol 1.0 as @a2a-js/sdk 1.3.0 implements it, with its 0.3 compatibility
 * layer on, so `message/send`, `message/stream`, `tasks/get` and `tasks/cancel` work too): JSON-RPC
 * at `/a2a`, the agent card at `/.well-known/agent-card.json`, built from the agents and profiles
 * running now. A task is a workflow; API keys scope it to a tenant as on the REST API.
 */
export function mountA2A(
  app: NestExpressApplication,
  deps: { bus: Bus; client: ChorusClient; keys: ApiKeys; log: Logger; publicUrl: () => string },
): void {
  const cards = new LiveAgentCard(deps.bus, deps.publicUrl, deps.keys.enabled);
  const executor = new ChorusExecutor(deps.bus, deps.client, deps.log);
  const handler = new DefaultRequestHandler(cards.base(), new ChorusTaskStore(deps.client, deps.log), executor);
  app.use(AGENT_CARD_PATH, agentCardHandler({ agentCardProvider: () => cards.current(), cache: { maxAge: 5 }, legacyCompat: { enabled: true } }));
  app.use(
    A2A_PATH,
    (req: Request & { chorusUser?: A2AUser }, res: Response, next: NextFunction) => {
      try {
        const scope = resolveTenant(deps.keys, req);
        req.chorusUser = new A2AUser(scope.tenant, scope.authenticated);
        next();
      } catch (e) {
        const status = (e as HttpException).getStatus?.() ?? 401;
        res.status(status).json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: `Unauthorized: ${(e as Error).message}` } });
      }
    },
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: async (req) => (req as Request & { chorusUser: A2AUser }).chorusUser,
      legacyCompat: { enabled: true },
    }),
  );
}

/** The agent card, rebuilt from discovery every few seconds so it lists what runs now. */
class LiveAgentCard {
  private cached?: { at: number; card: AgentCard };

  constructor(
    private readonly bus: Bus,
    private readonly publicUrl: () => string,
    private readonly secured: boolean,
  ) {}

  base(profiles: string[] = [], agents: string[] = []): AgentCard {
    const url = `${this.publicUrl()}${A2A_PATH}`;
    const lenses = profiles.length > 0 ? profiles.join(', ') : 'its search profiles';
    return AgentCard.fromJSON({
      name: 'Chorus',
      description:
        'Answers questions from a document corpus through a choreography of agents on NATS JetStream ' +
        `(${agents.length > 0 ? agents.join(' → ') : 'intent → planner → search → responder'}), fusing ${lenses} with Reciprocal Rank Fusion. ` +
        'Each task is a tracked, deduplicated workflow with a deadline.',
      version: '0.1.0',
      supportedInterfaces: [
        { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: [
        {
          id: 'search-and-answer',
          name: 'Search and answer',
          description: `Searches the corpus with ${lenses} in parallel, fuses the rankings, and answers with cited sentences and the ranked results.`,
          tags: ['search', 'retrieval', 'rrf', ...profiles],
          examples: ['how does chorus drop duplicates', 'what does the correlation hub keep'],
          inputModes: ['text/plain'],
          outputModes: ['text/plain', 'application/json'],
        },
      ],
      ...(this.secured
        ? {
            securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer', description: 'A Chorus API key' } } },
            securityRequirements: [{ schemes: { bearer: { list: [] } } }],
          }
        : {}),
    });
  }

  async current(): Promise<AgentCard> {
    if (this.cached && Date.now() - this.cached.at < CARD_TTL_MS) return this.cached.card;
    const services = await discoverServices(this.bus).catch(() => []);
    const order = ['intent', 'planner', 'search', 'responder'];
    const agents = order.filter((a) => services.some((s) => s.kind === 'agent' && s.name === a));
    const profiles = services.filter((s) => s.kind === 'profile').map((s) => s.name);
    const card = this.base(profiles, agents);
    this.cached = { at: Date.now(), card };
    return card;
  }
}
