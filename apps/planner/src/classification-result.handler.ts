import { Controller, Inject } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { deriveEnvelope, MessageTypes, type ClassificationResultPayload, type Envelope, type EnvelopeOf } from '@chorus/envelope';
import { OnEnvelope, type HandlerContext } from '@chorus/bus';
import { planExecution, type PlannerOptions } from './planner.rules';

export const PLANNER_AGENT = 'planner';
export const PLANNER_OPTIONS = Symbol('PLANNER_OPTIONS');
export const PLANNER_PROFILES = Symbol('PLANNER_PROFILES');

/** Where the planner learns which profiles run now. */
export interface AvailableProfiles {
  available(): string[];
}

/** Turns a `classification_result` into an `execution_plan`. */
@Controller()
export class ClassificationResultHandler {
  constructor(
    @Inject(PLANNER_OPTIONS) private readonly options: PlannerOptions,
    @Inject(PLANNER_PROFILES) private readonly profiles: AvailableProfiles,
  ) {}

  @OnEnvelope(MessageTypes.ClassificationResult)
  async handle(@Payload() envelope: Envelope, @Ctx() ctx: HandlerContext): Promise<EnvelopeOf<'execution_plan'>> {
    const plan = planExecution(envelope.payload as ClassificationResultPayload, this.options, ctx.deadline, new Date(), this.profiles.available());
    ctx.log.debug({ route: plan.route, profiles: plan.profiles.map((p) => p.name) }, 'planned');
    return deriveEnvelope(envelope, {
      messageType: MessageTypes.ExecutionPlan,
      agent: PLANNER_AGENT,
      targetAgent: 'search',
      nextSteps: ['search', 'responder'],
      payload: plan,
    });
  }
}
