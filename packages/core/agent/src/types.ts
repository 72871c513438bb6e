import type {
  AssistantMessage,
  ContentBlock,
  JsonObject,
  LlmCallConfig,
  LlmFailure,
  MessageId,
  MessageSource,
  UserMessage,
} from '@deepseek-ai/dsh-llm'
import type { ContextRecord, InboxRecord, LoadedSession, Session, SessionEvent, SessionId } from '@deepseek-ai/dsh-session'
import type { Context } from './cordis'

/** Which FIFO an input enters: the ordinary one (`next-turn`) or steering (`next-step`). */
export type InboxTarget = 'next-turn' | 'next-step'

/** A labelled, model-visible context attached to an input. `label` stays in the model-hidden envelope. */
export type AdditionalContext = ContextRecord

/** How the helpers accept input: text, blocks, or an object with optional fields. */
export type AgentInput =
  | string
  | readonly ContentBlock[]
  | {
      content: string | readonly ContentBlock[]
      source?: MessageSource
      contexts?: readonly AdditionalContext[]
      placement?: 'separate' | 'prompt-prefix'
      metadata?: JsonObject
    }

/** The admission record: every field explicit. `send()` takes exactly this. */
export interface ResolvedAgentInput {
  content: readonly ContentBlock[]
  source: MessageSource
  contexts: readonly AdditionalContext[]
  placement: 'separate' | 'prompt-prefix'
  metadata: JsonObject
  target: InboxTarget
  wakeup: boolean
}

/** One admitted item: the admission record plus its id, deep-frozen. */
export type AgentMessage = Readonly<InboxRecord>

/** A read-only projection of the pending work of an agent. */
export interface Inbox {
  /** The ordinary FIFO (followup / queue), oldest first. */
  readonly nextTurn: readonly AgentMessage[]
  /** The steering FIFO, oldest first. */
  readonly nextStep: readonly AgentMessage[]
}

/** `running` spans the driver's drain, possibly several turns; it does not prove a turn is open. */
export type AgentStatus = 'idle' | 'running'

export type AgentCancelCause =
  | { readonly kind: 'user' }
  | { readonly kind: 'parent' }
  | { readonly kind: 'hook'; readonly reason: string }
  | { readonly kind: 'disposed' }

export interface CancelOptions {
  /** Keep the queued and steering items (the open turn is still aborted). */
  keepInbox?: boolean
}

/** Per-agent model options, borrowed read-only. */
export interface AgentOptions {
  provider?: string
  model?: string
  reasoningEffort?: string
  maxTokens?: number
}

/**
 * An agent: the surface every plugin (UI, hooks, orchestrators) programs
 * against. All observable behaviour happens through its session's events and
 * the `agent/*` events.
 */
export interface Agent {
  /** The agent's id, shared with its session. */
  readonly id: SessionId
  readonly options: Readonly<AgentOptions>
  /** The live session this agent drives; its log is the durable truth. */
  readonly session: Session
  readonly inbox: Inbox
  readonly status: AgentStatus
  /** The agent's scoped context: what is registered through it is local to this agent and reverts on dispose. */
  readonly ctx: Context
  /**
   * Cancels the open turn. With no open turn it is a no-op: it emits nothing
   * and leaves the inbox as it is. Otherwise: `agent/cancel-requested` (for
   * `user`/`parent`), then pending work is cleared unless `keepInbox`
   * (`agent/inbox/discard`), then the turn is aborted cooperatively.
   */
  cancel(cause: AgentCancelCause, options?: CancelOptions): void
  /** Resolves once no turn is open, no woken work is pending, and the last turn's flush settled. */
  whenIdle(): Promise<void>
  /**
   * Runs `task` exclusively with turns: it starts once no turn is open, and no
   * turn opens (injections wait too) until it settles. Its signal aborts only
   * on dispose; `cancel()` does not stop it. Called from inside this agent's
   * own turn (a tool, a checkpoint listener) or its own running maintenance
   * task it would wait for itself: it rejects with `WOULD_DEADLOCK` instead.
   */
  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T>
  /**
   * The one admission path. Validates and freezes `input` (a malformed one
   * throws `INVALID_INPUT` and nothing is enqueued), then routes it: `next-turn`
   * + wakeup = followup, `next-turn` without = queue, `next-step` + wakeup =
   * steer, `next-step` without = inject. Returns the item's id, which becomes
   * the id of the `UserMessage` eventually logged.
   */
  send(input: ResolvedAgentInput): MessageId
  /** Queues an ordinary turn and wakes the driver. */
  followup(input: AgentInput): MessageId
  /** Queues an ordinary turn and leaves the driver parked. */
  queue(input: AgentInput): MessageId
  /**
   * Steers the open turn at its next step boundary; starts a turn when idle.
   * After a terminal stop, until that turn is flushed, steering is enqueued and
   * discarded at once (`agent/inbox/discard`).
   */
  steer(input: AgentInput): MessageId
  /** Appends a durable model-visible context without waking the driver; contexts must be empty. */
  inject(input: AgentInput): MessageId
}

/**
 * What loading a resumed agent's session had to fix or found (issue 14.3):
 * the persistence backend's `LoadedSession.repairs` (crash repairs it
 * appended, already durable) and `LoadedSession.warnings` (non-fatal
 * findings, such as a torn last line it dropped and where the cut bytes
 * went), passed on as the backend reported them. Frozen.
 */
export interface AgentLoadReport {
  readonly repairs: LoadedSession['repairs']
  readonly warnings: LoadedSession['warnings']
}

/** The owner's handle: the one consumer-facing teardown capability. */
export interface AgentHandle {
  readonly agent: Agent
  /**
   * Set for a resumed agent (`ctx.agents.resume`), also when the load found
   * nothing (both lists empty); absent for a created one. The same report is
   * announced by `agent/load-report` when it is not empty, which is how the
   * owners of config agents (which have no handle) learn it.
   */
  readonly loadReport?: AgentLoadReport
  /** Stops and drains the agent, detaches it and its session, then revokes its scope. Memoized. */
  dispose(): Promise<void>
}

/**
 * An agent entered in `ctx.agents` but not announced yet
 * (`enterUnannounced`), for drivers that enter an agent and its session
 * before announcing either (R-LIFE-1).
 */
export interface AgentEntry {
  /**
   * Emits `agent/created`. A synchronous listener throw vetoes the
   * publication and is rethrown; the agent stays entered (the listeners before
   * the veto saw it created) and the caller must `detach()` it, which emits
   * the paired `agent/disposed`. Callable once.
   */
  announce(): void
  /**
   * Removes the agent if it is still the one registered under its id. Emits
   * `agent/disposed` once when `announce` ran (also a vetoed one), nothing
   * otherwise. Harmless to call again; called by a listener during
   * `announce`, it waits until that dispatch has unwound.
   */
  detach(): void
}

export interface CreateAgentOptions {
  sessionId: SessionId
  /** `parentSession` links a fork child to its parent; `cwd` is the workspace. */
  meta?: { cwd?: string; parentSession?: SessionId }
  /**
   * The child's frozen prefix; validated and snapshotted. To fork an agent,
   * pass the events of a fork: `seed: ctx.sessions.fork(parent.session,
   * boundary?).events`. The fork's own `session/meta` gives the parent link
   * and the cwd (`meta.cwd` still wins; a different `meta.parentSession` is
   * refused), and the events after it are the seed; the child log starts
   * with one `session/meta` of its own. Any other array is taken as a
   * closed-turn prefix as is (set `meta.parentSession` yourself then).
   */
  seed?: readonly SessionEvent[]
  agentOptions?: AgentOptions
  /** Trusted composition code run on the unpublished agent's scoped context; it must not drive the agent. */
  setup?: (ctx: Context) => void | Promise<void>
  /** Cancels load/setup/publish only; detached before the handle is returned. */
  signal?: AbortSignal
}

export interface ResumeAgentOptions {
  resumeSessionId: SessionId
  agentOptions?: AgentOptions
  setup?: (ctx: Context) => void | Promise<void>
  signal?: AbortSignal
}

/** The creation seam behind `ctx.agents`; the agent loop registers itself as one. */
export interface AgentFactory {
  createAgent(owner: Context, options: CreateAgentOptions): Promise<AgentHandle>
  resume(owner: Context, options: ResumeAgentOptions): Promise<AgentHandle>
}

export type SessionStartSource = 'startup' | 'resume' | 'clear' | 'compact'

export type PreStepDecision = { kind: 'reject' } | { kind: 'enter'; messages: readonly UserMessage[] }

export type PromptDecision =
  | { kind: 'allow'; content: readonly ContentBlock[]; additionalContexts: readonly AdditionalContext[] }
  | { kind: 'block'; reason: string }

/**
 * Whether a turn goes on after a step. `stop.by` names the deciding policy: a
 * `terminal` stop ends the turn `stopped{by}`; a non-terminal stop is a
 * natural end (`agent/turn-stopping`, a last steering drain, then
 * `completed`), and `by` is informational.
 */
export type ContinuationDecision = { kind: 'continue'; reason?: string } | { kind: 'stop'; by: string; terminal?: boolean }

export type RequestErrorDecision = { kind: 'retry' } | undefined

/** Re-exported for listener signatures. */
export type { AssistantMessage, LlmCallConfig, LlmFailure, UserMessage }
