import { Catch, type ArgumentsHost, type INestMicroservice, type RpcExceptionFilter } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Server, type CustomTransportStrategy } from '@nestjs/microservices';
import { lastValueFrom, throwError, type Observable } from 'rxjs';
import { isMessageType, type Envelope } from '@chorus/envelope';
import { PinoNestLogger, type Logger } from '@chorus/observability';
import type { ConsumerOptions } from './bus.options';
import type { HandlerContext, HandlerResult } from './handler.types';
import { ALL_MESSAGE_TYPES, JetStreamConsumer, type ConsumerPattern } from './jetstream.consumer';
import type { Bus } from './nats.bus';
import type { Component } from './process.runtime';
import { registerAgentService } from './service.directory';

/**
 * `@EventPattern` for a JetStream handler: `@OnEnvelope('query')`, or `@OnEnvelope('*')` for every
 * message type. (Nest's typed overloads cannot type the `(envelope, ctx)` signature.)
 */
export function OnEnvelope(pattern: ConsumerPattern): MethodDecorator {
  return EventPattern<string>(pattern);
}

/**
 * Nest's exception layer turns every unknown error into `{status:'error', message:'Internal server
 * error'}`, which would erase whether a failure is retryable. This filter hands the original error
 * back to the consumer loop, which decides.
 */
@Catch()
export class RethrowRpcFilter implements RpcExceptionFilter {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}

/**
 * A NestJS transport over JetStream: each `@EventPattern('<message_type>')` handler (or
 * `@EventPattern('*')` for every type) gets a durable pull consumer that the agent's replicas
 * share. The handler receives the parsed envelope and a {@link HandlerContext}, and returns the
 * envelopes to publish.
 */
export class JetStreamTransport extends Server implements CustomTransportStrategy {
  private readonly consumers: JetStreamConsumer[] = [];

  constructor(
    private readonly bus: Bus,
    private readonly consumerOptions: ConsumerOptions,
    private readonly log: Logger,
  ) {
    super();
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      for (const [pattern, handler] of this.getHandlers()) {
        if (!handler.isEventHandler) throw new Error(`${pattern}: JetStream handlers must be @EventPattern`);
        if (pattern !== ALL_MESSAGE_TYPES && !isMessageType(pattern)) {
          throw new Error(`${pattern} is not a message type (or '${ALL_MESSAGE_TYPES}')`);
        }
        const consumer = new JetStreamConsumer(
          this.bus,
          pattern as ConsumerPattern,
          this.consumerOptions,
          async (envelope: Envelope, ctx: HandlerContext) => {
            const result = await handler(envelope, ctx);
            return (await lastValueFrom(this.transformToObservable(result), { defaultValue: undefined })) as HandlerResult;
          },
          this.log,
        );
        await consumer.start();
        this.consumers.push(consumer);
        this.log.info({ consumer: consumer.durable }, 'consuming');
      }
      callback();
    } catch (e) {
      callback(e);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.consumers.map((c) => c.stop()));
    this.consumers.length = 0;
  }

  /** The durable consumers this agent reads. */
  durables(): string[] {
    return this.consumers.map((c) => c.durable);
  }

  on(): never {
    throw new Error('JetStreamTransport has no events to subscribe to');
  }

  unwrap<T>(): T {
    return this.bus as T;
  }
}

export interface AgentAppOptions {
  bus: Bus;
  consumer: ConsumerOptions;
  log: Logger;
  /** Register the agent for discovery (default true; the hub registers each replica itself). */
  register?: boolean;
}

/** Creates an agent: a Nest microservice whose event handlers consume JetStream. */
export async function createAgentApp(module: unknown, options: AgentAppOptions, transport?: JetStreamTransport): Promise<INestMicroservice> {
  const app = await NestFactory.createMicroservice(module as never, {
    strategy: transport ?? new JetStreamTransport(options.bus, options.consumer, options.log),
    logger: new PinoNestLogger(options.log),
  });
  app.useGlobalFilters(new RethrowRpcFilter());
  return app;
}

/**
 * Creates an agent, starts consuming, and registers it for discovery (`$SRV`). The component
 * closes it, draining in-flight handlers.
 */
export async function startAgent(name: string, module: unknown, options: AgentAppOptions): Promise<Component> {
  const transport = new JetStreamTransport(options.bus, options.consumer, options.log);
  const app = await createAgentApp(module, options, transport);
  let service: Awaited<ReturnType<typeof registerAgentService>> | undefined;
  try {
    await app.listen();
    if (options.register !== false) service = await registerAgentService(options.bus, name, { consumers: transport.durables().join(',') }, options.log);
  } catch (e) {
    // Consumers that did start (an agent may have several) stop again: a caller that retries starts them anew.
    await app.close().catch((err: unknown) => options.log.warn({ err, agent: name }, 'closing an agent that failed to start failed'));
    throw e;
  }
  return {
    name,
    close: async () => {
      await service?.stop();
      await app.close();
    },
  };
}
