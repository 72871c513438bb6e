import type { Agent, AdditionalContext } from '@deepseek-ai/dsh-agent'
import type { ToolCallBlock, UserMessage } from '@deepseek-ai/dsh-llm'

// What a tool batch (`tool-batch.ts`) needs from `ctx.tools` and from the turn.

/** What one tool call produced, as `ctx.tools` resolves it. */
export interface CallOutcome {
  message: UserMessage
  error?: { code: string; message: string }
  contexts: readonly AdditionalContext[]
}

type Call = { id: ToolCallBlock['id']; name: string; arguments: string }

/**
 * One call staged through `ctx.tools` (see `ToolRegistry.stage`): each stage
 * returns a promise only when it had something to wait for, and never throws
 * or rejects.
 */
export interface BatchStage {
  isConcurrencySafe(): boolean
  admit(): Promise<void> | undefined
  run(): Promise<void> | undefined
  finish(): CallOutcome | Promise<CallOutcome>
}

/** The part of `ctx.tools` a batch needs; `stage` must not keep `options` (one object serves the whole batch). */
export interface BatchTools {
  stage(call: Call, options: { readonly agent: Agent; readonly signal: AbortSignal }): BatchStage
}

/** The turn's cancellation as a batch reads it: the turn holder (`aborted` is set before its signal aborts). */
export interface BatchHolder {
  readonly aborted: boolean
  readonly signal: AbortSignal
}
