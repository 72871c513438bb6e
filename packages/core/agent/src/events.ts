type Awaitable<T> = T | Promise<T>
import type { ContentBlock, LlmCallConfig, LlmFailure, MessageSource, UserMessage, AssistantMessage } from '@deepseek-ai/dsh-llm'
import type {
  Agent,
  AgentCancelCause,
  AgentLoadReport,
  AgentMessage,
  AgentStatus,
  ContinuationDecision,
  PreStepDecision,
  PromptDecision,
  RequestErrorDecision,
  SessionStartSource,
} from './types'

// Every agent/* event is dispatched scope-filtered: a listener registered in an
// agent's scoped context (`agent.ctx`) receives only that agent's events;
// global listeners receive every agent's.
declare module 'cordis' {
  interface Events {
    /**
     * An agent was published (it is in `ctx.agents` and its session in
     * `ctx.sessions`). A driver enters both registries before it announces
     * either, so `session/created` comes first and its listeners already find
     * the agent in `ctx.agents`. A step of the publish transaction: a
     * synchronous throw vetoes the publication, which rolls back with a
     * paired `agent/disposed` (then `session/disposed`); a rejected promise is
     * only logged.
     * @mode emit
     */
    'agent/created'(agent: Agent): void
    /**
     * What loading a resumed agent's session repaired or warned about
     * (`report.repairs`, `report.warnings`, as the persistence backend
     * reported them). Emitted once, after `agent/created` and before
     * `agent/session-start('resume')`, and only when the report is not empty;
     * the owner of a programmatic resume also finds it on the handle
     * (`AgentHandle.loadReport`). Observation only; listener failures are
     * contained.
     * @mode emit
     */
    'agent/load-report'(agent: Agent, report: AgentLoadReport): void
    /**
     * An agent was detached, after its driver went quiet and before its session
     * is detached. Once per published agent. Listener failures are contained.
     * @mode emit
     */
    'agent/disposed'(agent: Agent): void
    /**
     * The driver's status changed (`idle` ⇄ `running`); emitted on transitions only.
     * @mode emit
     */
    'agent/status'(agent: Agent, status: AgentStatus): void
    /**
     * The session lifecycle starts, once before the first turn: `startup` for
     * create, `resume` for resume. Listeners may `inject()` context.
     * @mode emit
     */
    'agent/session-start'(agent: Agent, source: SessionStartSource): void
    /**
     * A step or a turn failed. `step` is `undefined` for failures outside a
     * step. Observation only.
     *
     * It also reports, once, that the agent itself failed (the refused-write
     * rule): `error` is then an `AgentError` with code `PERSISTENCE_FAILED`
     * (a flush of the session log rejected) or `APPEND_REFUSED` (the log
     * refused an event), whose `cause` is the original error. The open turn
     * closed `turn/end{error}` as far as the log accepted; outside a turn,
     * `turn` is the last turn (0 before any) and `step` is `undefined`. The
     * agent is idle and refuses every later admission and `runMaintenance`
     * with that code until it is disposed: owners (a CLI) should report it and
     * stop using the agent.
     * @mode emit
     */
    'agent/error'(agent: Agent, turn: number, step: number | undefined, error: unknown): void
    /**
     * An effective `cancel()` of cause `user` or `parent`, before anything is
     * cleared. Listener failures cannot veto the cancel; work they queue is
     * cleared with the rest.
     * @mode emit
     */
    'agent/cancel-requested'(agent: Agent, cause: AgentCancelCause): void
    /**
     * One item entered a FIFO (`message.target` says which).
     * @mode emit
     */
    'agent/inbox/enqueue'(agent: Agent, message: AgentMessage): void
    /**
     * The driver claimed one item. Each enqueued id gets at most one dequeue or discard.
     * @mode emit
     */
    'agent/inbox/dequeue'(agent: Agent, message: AgentMessage): void
    /**
     * Items were dropped (cancel, dispose, the steering of a batch
     * `agent/pre-step` rejected, a terminal stop). At quiescence every enqueued id has been dequeued,
     * discarded, or is still pending.
     * @mode emit
     */
    'agent/inbox/discard'(agent: Agent, messages: readonly AgentMessage[]): void
    /**
     * Prompt policy for a claimed ordinary item. The innermost default allows
     * the item's content with its contexts as `additionalContexts`. `allow` is
     * authoritative: a wrapper that calls `next()` keeps the downstream
     * `content` and `additionalContexts` unless it means to replace them.
     * `block` ends the turn `blocked` and drops the item and its contexts.
     * @mode waterfall
     */
    'agent/prompt-submit'(
      agent: Agent,
      content: readonly ContentBlock[],
      source: MessageSource,
      signal: AbortSignal,
      next: () => Promise<PromptDecision>,
    ): Awaitable<PromptDecision>
    /**
     * The decision checkpoint before a step opens. `proposed` is the batch the
     * step would enter: the prompt with its contexts on step 1; later, the
     * steering that arrived after the previous checkpoint, the continuation's
     * steering message, or nothing. The first non-nullish decision wins; with
     * none, `proposed` is entered. `reject` opens no step, writes nothing of the
     * batch, discards its steering items and ends the turn
     * `stopped{by:'pre-step'}`. An entered message that is `===` a proposed one
     * keeps its event type and envelope; any other becomes a `user/message`.
     * @mode serial
     */
    'agent/pre-step'(
      agent: Agent,
      turn: number,
      step: number,
      proposed: readonly UserMessage[],
      signal: AbortSignal,
    ): Awaitable<PreStepDecision | void>
    /**
     * The call config of a step (provider, model, reasoning effort, …).
     * Listeners wrap `next()` and return the config to use; they cannot touch
     * messages. The effective config is logged (`request/header`) before
     * dispatch.
     * @mode waterfall
     */
    'agent/request'(
      agent: Agent,
      turn: number,
      step: number,
      config: LlmCallConfig,
      signal: AbortSignal,
      next: () => Promise<LlmCallConfig>,
    ): Awaitable<LlmCallConfig>
    /**
     * The assembled assistant message of a successful call, before its
     * `assistant/message` anchor is written and its tools run. Listeners return
     * the message to record. A throw records an empty-content anchor and fails
     * the turn; under a cancel the step closes as a cancel does instead (an
     * `interrupted` anchor keeps what arrived).
     * @mode waterfall
     */
    'agent/step-result'(
      agent: Agent,
      turn: number,
      step: number,
      message: AssistantMessage,
      signal: AbortSignal,
      next: () => Promise<AssistantMessage>,
    ): Awaitable<AssistantMessage>
    /**
     * After the step's results, contexts, injections and steering are logged
     * (they become durable at the turn's flush), before `step/end`. A cancelled batch arrives with an aborted signal.
     * Observation: return nothing.
     * @mode serial
     */
    'agent/post-step'(agent: Agent, turn: number, step: number, signal: AbortSignal): Awaitable<void>
    /**
     * Recovery after a failed model call, once its step has closed. `error` is
     * the live error, `failure` its classification, `priorFailures` the earlier
     * consecutive failures of this turn. Returning `{ kind: 'retry' }` rebuilds
     * the request from the log in a new numbered step; the default `undefined`
     * makes the failure terminal. Aborts caused by the turn's own cancellation
     * never reach this event.
     * @mode waterfall
     */
    'agent/request-error'(
      agent: Agent,
      turn: number,
      step: number,
      error: unknown,
      failure: LlmFailure,
      priorFailures: readonly LlmFailure[],
      signal: AbortSignal,
      next: () => Promise<RequestErrorDecision>,
    ): Awaitable<RequestErrorDecision>
    /**
     * Whether the turn continues after a step. The default is `continue` when
     * the step had tool calls or wrote steering, or steering is pending, else
     * `{ kind: 'stop', by: 'default' }`. A `continue` with a `reason` enters the
     * reason as a `steering/message` in the next step. A `terminal` stop closes
     * the turn `stopped{by}` and discards steering that arrives until the turn
     * is flushed.
     * @mode waterfall
     */
    'agent/turn-continuation'(
      agent: Agent,
      turn: number,
      defaultDecision: ContinuationDecision,
      signal: AbortSignal,
      next: () => Promise<ContinuationDecision>,
    ): Awaitable<ContinuationDecision>
    /**
     * The turn is about to stop naturally, before the last steering drain. A
     * listener may `steer()` to keep it going. Observation: return nothing.
     * @mode serial
     */
    'agent/turn-stopping'(agent: Agent, turn: number, signal: AbortSignal): Awaitable<void>
  }
}

export {}
