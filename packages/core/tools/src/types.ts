import type { CallId, ContentBlock, ToolSchema, UserMessage } from '@deepseek-ai/dsh-llm'
import type { ContextRecord } from '@deepseek-ai/dsh-session'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ApprovalScope } from './approval-scope'
import type { ToolEffect } from './effect'
import type { ToolErrorCode } from './errors'

/** What a tool body returns: text, or content blocks (text, images, …). */
export type ToolOutput = string | readonly ContentBlock[]

/** A context a tool body defers: appended after the tool batch, in call order. */
export interface DeferredContext {
  /** A short descriptor kept in the model-hidden envelope (e.g. `'file: src/a.ts'`). */
  label: string
  content: string | readonly ContentBlock[]
}

/**
 * What a tool body receives besides its arguments.
 *
 * `signal` aborts when the caller's signal aborts (always: no `tools/execute`
 * wrapper can detach it), when a wrapper's replacement signal aborts, or when
 * the call's timeout elapses. A body should stop promptly when it aborts and
 * throw; whatever it returns after an abort is kept as its real result.
 */
export interface ToolRunContext {
  readonly callId: CallId
  readonly name: string
  /** The agent whose loop initiated the call. */
  readonly agent: Agent
  readonly signal: AbortSignal
  /**
   * Defers a model-visible context to after the tool batch (the loop appends
   * it once every result of the step is logged). Contexts come back in
   * `ToolCallResult.contexts` in the order they were deferred; a result that a
   * `tools/post-execute` listener blocks drops them. Throws `INVALID_CONTEXT`
   * for a malformed record and `CALL_SETTLED` once the call's result exists.
   */
  deferContext(context: DeferredContext): void
}

/**
 * A tool: the model-facing schema plus the code that runs it. The registry
 * holds it and the loop dispatches it; tool authors usually build one with
 * `defineTool`, which types `Args` from a zod schema.
 *
 * Contract:
 * - `name` matches `^[a-zA-Z0-9_-]{1,64}$` (what every provider accepts);
 *   `parameters` is a JSON Schema object, sent to the model as it is.
 * - The model's arguments must parse as a JSON object; `validate` (when
 *   present) then checks them and returns the value `execute` receives, or
 *   throws: its message becomes the `INVALID_ARGUMENTS` result. `execute`
 *   never sees arguments that failed validation.
 * - `execute` may throw: the call gets an error result (`TOOL_ERROR`, or the
 *   code of a thrown `ToolError`). It never crashes the loop.
 * - `isConcurrencySafe(args)` says whether this call may overlap other
 *   concurrency-safe calls; absent, every call is exclusive. It must be cheap
 *   and pure: the loop asks just before starting each call, with the
 *   validated arguments that call's body then receives (parsed once).
 * - `finalizeContent` turns the final output (after `tools/post-execute`) into
 *   the result's content blocks; by default a string becomes one text block.
 * - `timeoutMs` bounds the body: once it elapses the call's signal aborts and
 *   the call returns `TIMEOUT` without waiting for a body that ignores it.
 *   Without it the registry's `defaultTimeoutMs` applies (2 minutes unless
 *   configured), so every call has a deadline unless its tool opts out. At
 *   most 2^31 - 1 ms (what a timer can hold). `0` opts out: no deadline, no
 *   timer; only for a tool that supervises its own work and ends when its
 *   signal aborts (a subagent, whose child agent has its own turns and is
 *   cancelled with the caller's turn). A body that ignores its signal then
 *   keeps the turn open until it returns.
 * - `effect` says what a call does (`read` | `write` | `execute` |
 *   `network`) for permission policies; undeclared counts as `execute`
 *   (policies read it with `effectOf`, which applies that rule).
 */
export interface ToolDefinition<Args = unknown> extends ToolSchema {
  execute(args: Args, run: ToolRunContext): ToolOutput | Promise<ToolOutput>
  validate?(args: unknown): Args
  isConcurrencySafe?(args: Args): boolean
  finalizeContent?(output: ToolOutput, run: ToolRunContext): readonly ContentBlock[]
  timeoutMs?: number
  effect?: ToolEffect
}

/** One call the model made: the fields of its `tool-call` block. */
export interface ToolCall {
  readonly id: CallId
  readonly name: string
  /** The raw JSON text exactly as the model streamed it. */
  readonly arguments: string
}

export interface ToolExecuteOptions {
  /** The agent whose loop makes the call; it becomes `run.agent` and scopes every `tools/*` event. */
  agent: Agent
  /** The caller's cancellation (the turn's signal). */
  signal?: AbortSignal
}

/**
 * The outcome of one call. `execute` always resolves to one, never rejects.
 *
 * - `message`: a user-role message holding exactly one `tool-result` block for
 *   the call (`isError: true` on failures, whose text starts with `Error: `).
 * - `error`: present exactly when the call failed; `message` is the same
 *   sentence as the model-visible text, without the `Error: ` prefix.
 * - `contexts`: what the body deferred, in call order (frozen).
 */
export interface ToolCallResult {
  readonly message: UserMessage
  readonly error?: { readonly code: ToolErrorCode | (string & {}); readonly message: string }
  readonly contexts: readonly ContextRecord[]
}

/**
 * One call on its way through the pipeline, as policy listeners, guards and
 * the approval service see it. `args` are the validated arguments; `signal` is
 * the caller's.
 */
export interface ToolInvocation {
  readonly call: ToolCall
  readonly tool: ToolDefinition
  readonly args: unknown
  readonly agent: Agent
  readonly signal: AbortSignal
}

/**
 * What `tools/execute` wrappers receive: the invocation plus a replaceable
 * `signal`. A wrapper may assign a new `AbortSignal` (a timeout, a budget)
 * before calling `next()`; the body's signal still aborts with the caller's
 * (the body sees a signal that aborts with either of them, or the deadline), so no wrapper can
 * detach a cancellation. Nothing else can be replaced here: the result comes
 * from the body (change it in `tools/post-execute`).
 */
export interface ToolDispatch extends Omit<ToolInvocation, 'signal'> {
  signal: AbortSignal
}

/**
 * The decision of `tools/pre-execute`. `allow` runs the call (subject to the
 * guards); `deny` refuses it with `reason`; `ask` hands it to the
 * `ctx.approval` service, and is a denial when none is mounted. An `ask` may
 * carry the `scope` an "always" answer would cover (the asking policy then
 * remembers such answers; see `tools/approval`).
 */
export type PreExecuteDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'ask'; readonly reason?: string; readonly scope?: ApprovalScope }

/**
 * The decision of `tools/post-execute`: keep the output (`accept`), replace
 * it (`replace`, e.g. redaction), or withhold it and its deferred contexts
 * from the model (`block`, a `BLOCKED` error result).
 */
export type PostExecuteDecision =
  | { readonly kind: 'accept' }
  | { readonly kind: 'replace'; readonly output: ToolOutput }
  | { readonly kind: 'block'; readonly reason: string }

/** What a guard returns: nothing to let the call pass, or a denial. */
export type ToolGuardVerdict = { readonly kind: 'deny'; readonly reason: string } | undefined | void

/**
 * An owner's policy check, run after `tools/pre-execute` (and approval) and
 * before dispatch. Guards are monotonic: each can only deny, and none can
 * allow what another denied. A guard that throws denies (fail closed).
 */
export type ToolGuard = (invocation: ToolInvocation) => ToolGuardVerdict | Promise<ToolGuardVerdict>

/** What `tools/change` reports: one registration appeared or went away. */
export interface ToolChange {
  readonly kind: 'add' | 'remove'
  readonly name: string
  /** The agent the registration is local to; absent for a global one (every agent may see the change). */
  readonly agentId?: Agent['id']
}
