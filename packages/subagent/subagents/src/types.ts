import type { Agent, AgentOptions } from '@deepseek-ai/dsh-agent'
import type { TokenUsage } from '@deepseek-ai/dsh-llm'
import type { SessionId } from '@deepseek-ai/dsh-session'

/**
 * A kind of child agent, from config (R-SUB-2).
 *
 * - `tools`: the allow-list, tool names or globs (`*` matches any run of
 *   characters: `mcp__github__*`). The child sees only these tools' schemas
 *   and a call of any other tool is refused, even by name. Absent: every
 *   tool its parent's app registers.
 * - `model` / `provider`: the child's route; absent, the parent's.
 */
export interface AgentType {
  readonly name: string
  /** When to use it: shown to the parent model in the `task` tool's description. */
  readonly description: string
  /** The child's persona: the system prompt section that replaces the deployment persona. */
  readonly systemPrompt: string
  readonly tools?: readonly string[]
  readonly model?: string
  readonly provider?: string
}

/** What `ctx.subagents.spawn()` is given. */
export interface SpawnSpec {
  /** The agent that starts the child: its child is created through `parent.ctx`, and goes with it. */
  readonly parent: Agent
  /** The child's first prompt. */
  readonly prompt: string
  /** A few words on what the child does (logged, shown in UIs). */
  readonly description: string
  /** The agent type's name; absent: the configured `defaultType`, else the first type. */
  readonly agentType?: string
  /**
   * Whether nobody waits for the child (a background task): its calls that
   * would ask the person are refused unless a permission rule allows them.
   */
  readonly background?: boolean
  /** The parent's tool call that starts the child, if one does (logged in `subagent/started`). */
  readonly callId?: string
  /** Cancels the run (the queued spawn, or the child's turn with cause `parent`). */
  readonly signal?: AbortSignal
}

/** Where a run is. */
export type SubagentStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled'

/**
 * How a child's run ended. `answer` is the text of the child's last answer
 * (empty when it gave none); `usage` adds up every model call of the run;
 * `error` says why it failed (or was cancelled).
 */
export interface SubagentResult {
  readonly runId: string
  readonly sessionId: SessionId
  readonly agentType: string
  readonly status: Exclude<SubagentStatus, 'queued' | 'running'>
  readonly answer: string
  readonly usage: TokenUsage
  readonly modelCalls: number
  readonly error?: { readonly code: string; readonly message: string }
}

/** One child agent's run (R-SUB-1). */
export interface SubagentRun {
  readonly id: string
  /** The child's session id (its transcript), known before the child starts. */
  readonly sessionId: SessionId
  readonly agentType: string
  readonly description: string
  readonly parent: Agent
  readonly background: boolean
  readonly callId: string | undefined
  /** How deep the child is: 1 for a child of a top-level agent. */
  readonly depth: number
  readonly status: SubagentStatus
  /** The child agent while it runs in this process (undefined while queued and after it ended). */
  readonly agent: Agent | undefined
  /** The child's latest text so far (its last non-empty answer text), for progress views. */
  output(): string
  /** Settles once the child has ended and been disposed; never rejects. */
  result(): Promise<SubagentResult>
  /** Cancels the run: a queued one never starts; a running child's turn is cancelled with cause `parent`. */
  cancel(): void
}

/** What a provider is asked to run: a spawn, resolved and admitted. */
export interface SubagentRequest {
  readonly runId: string
  readonly sessionId: SessionId
  readonly parent: Agent
  readonly type: AgentType
  readonly prompt: string
  readonly description: string
  readonly background: boolean
  readonly depth: number
  readonly callId?: string
  /** The child's model options: the type's route over the parent's options. */
  readonly agentOptions: AgentOptions
}

/** How a provider's child ended (the run adds its ids). */
export type ChildOutcome = Pick<SubagentResult, 'status' | 'answer' | 'usage' | 'modelCalls' | 'error'>

/** What a provider reports while a child runs. */
export interface ProviderHooks {
  /** The child exists (an in-process provider passes its agent). */
  started(child: Agent | undefined): void
}

/**
 * The seam behind `ctx.subagents` (R-SUB-1): whatever runs a child agent. The
 * service resolves the type, checks the limits, queues, logs and tracks the
 * run; the provider creates the child, drives it to its answer, and disposes
 * it. `signal` aborts when the run is cancelled (the parent's turn was
 * cancelled, the parent went away, someone called `cancel()`): the provider
 * cancels the child's turn with cause `{ kind: 'parent' }` and resolves
 * `cancelled` once the child is gone. It must not reject.
 */
export interface SubagentProvider {
  readonly name: string
  run(request: SubagentRequest, signal: AbortSignal, hooks: ProviderHooks): Promise<ChildOutcome>
}

/** What `subagents/started` and `subagents/finished` carry. */
export interface SubagentEvent {
  readonly run: SubagentRun
  readonly parent: Agent
}

/** `subagents/finished`: how it ended. */
export interface SubagentEndEvent extends SubagentEvent {
  readonly result: SubagentResult
}
