import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

export const COMMANDS = ['cancel', 'retry'] as const;
export type Command = (typeof COMMANDS)[number];

/** `orchestration_command`: an instruction about a workflow, addressed to the hub and the agents. */
export class OrchestrationCommandPayload {
  /** What to do. */
  @IsIn(COMMANDS)
  command!: Command;

  /** Why, in plain words, for the audit trail. */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string | null;
}
