import type { Branded } from '@deepseek-ai/dsh-brand'
import type {
  AssistantMessage,
  CallId,
  ContentBlock,
  FinishReason,
  JsonObject,
  LlmFailure,
  MessageId,
  MessageSource,
  StreamChunk,
  TokenUsage,
  ToolSchema,
  UserMessage,
} from '@deepseek-ai/dsh-llm'

/** The shared identity of a session and the agent that drives it. */
export type SessionId = Branded<'SessionId'>
/** Cast-only: brands a string as a `SessionId`, with no validation. */
export const SessionId = (raw: string): SessionId => raw as SessionId

/** Why a turn started, keyed by `kind`. Extensible by declaration merging. */
export interface TurnTriggerMap {
  /** An ordinary queued item (followup/queue) was claimed. */
  prompt: { kind: 'prompt' }
  /** Steering woke an idle agent. */
  steering: { kind: 'steering' }
  /** A one-shot turn that only records an injected `user/message`; it has no step. */
  injection: { kind: 'injection' }
}
export type TurnTrigger = TurnTriggerMap[keyof TurnTriggerMap]

/** Why a turn ended, keyed by `kind`. Extensible by declaration merging. */
export interface TurnEndReasonMap {
  completed: { kind: 'completed' }
  /** Cancelled (`cancel()` or dispose). */
  aborted: { kind: 'aborted' }
  /**
   * `agent/prompt-submit` blocked the prompt. `reason` is the policy's own
   * words (`PromptDecision.reason`); logs written before it was recorded lack it.
   */
  blocked: { kind: 'blocked'; reason?: string }
  /** A policy stopped the turn (`by` names it: `'pre-step'`, a continuation listener, …). */
  stopped: { kind: 'stopped'; by: string }
  /** The turn failed; `failure` is the structured cause. */
  error: { kind: 'error'; failure: LlmFailure | { code: string; message: string } }
  /** Written only by crash repair on load: the process died inside this turn. */
  interrupted: { kind: 'interrupted' }
}
export type TurnEndReason = TurnEndReasonMap[keyof TurnEndReasonMap]

/** An additional context attached to an input: a labelled, model-visible block list. */
export interface ContextRecord {
  /** A short descriptor (model-hidden in the envelope, e.g. `'open file: a.ts'`). */
  label: string
  content: ContentBlock[]
}

/**
 * One admitted input item, as the durable inbox records it. dsh-agent aliases
 * it as `AgentMessage`.
 */
export interface InboxRecord {
  id: MessageId
  content: ContentBlock[]
  source: MessageSource
  contexts: ContextRecord[]
  placement: 'separate' | 'prompt-prefix'
  metadata: JsonObject
  target: 'next-turn' | 'next-step'
  wakeup: boolean
}

/** Model-hidden data that lets a UI show what the person typed, apart from the contexts. */
export interface PromptEnvelope {
  display: ContentBlock[]
  contexts: { label: string }[]
}

export interface Todo {
  id: string
  content: string
  status: 'pending' | 'in_progress' | 'completed'
}

/**
 * The session event variants, keyed by `type`. Plugins add their own by
 * declaration merging (and, for model-visible ones, register a projector):
 *
 * ```ts
 * declare module '@deepseek-ai/dsh-session' {
 *   interface SessionEventMap { 'goal/change': { goal: string } }
 * }
 * ```
 */
export interface SessionEventMap {
  /** The first event of every session. `seedLength` counts the frozen prefix copied from a fork. */
  'session/meta': { cwd?: string; parentSession?: SessionId; seedLength?: number; createdAt: number; version: number }
  'turn/start': { turn: number; trigger: TurnTrigger }
  'turn/end': { turn: number; reason: TurnEndReason }
  'step/start': { turn: number; step: number }
  'step/end': { turn: number; step: number }
  /**
   * Model-visible. `metadata` (model-hidden) is the admission metadata of an
   * injected input (`inject()`), present only when it is not empty: an
   * injection has no `inbox/enqueue` record to carry it, as queued input has.
   */
  'user/message': { message: UserMessage; envelope?: PromptEnvelope; metadata?: JsonObject }
  /** Model-visible. */
  'steering/message': { message: UserMessage; envelope?: PromptEnvelope }
  /** Log-only: one streamed chunk. */
  'assistant/chunk': { turn: number; step: number; chunk: StreamChunk }
  /** Model-visible unless its content is empty: the anchor of one model call. */
  'assistant/message': {
    turn: number
    step: number
    message: AssistantMessage
    /** The seqs of this call's `assistant/chunk` events (`[]` when there were none). */
    chunkSeqs: number[]
    usage?: TokenUsage
    finishReason: FinishReason
    /** The stream was cut (cancel); the content is what arrived. */
    interrupted?: true
  }
  /** Log-only: a tool call entered the pipeline (the call itself is in the assistant message). */
  'tool/call': { turn: number; step: number; callId: CallId; name: string; arguments: string }
  /** Model-visible: the call's result message. */
  'tool/result': { turn: number; step: number; message: UserMessage; error?: { code: string; message: string } }
  'todo/write': { todos: Todo[] }
  /** Log-only: the effective request header, written when it changes. */
  'request/header': {
    provider: string
    model: string
    reasoningEffort?: string
    /** The output-token cap sent with the request, when one is set. */
    maxTokens?: number
    /** The sampling temperature sent with the request, when one is set. */
    temperature?: number
    system: string
    tools: ToolSchema[]
    reason: 'initial' | 'change' | 'resume'
  }
  /** Log-only: an item entered the durable inbox. */
  'inbox/enqueue': { message: InboxRecord }
  /** Log-only: the driver claimed an item. */
  'inbox/dequeue': { id: MessageId }
  /** Log-only: items were dropped (cancel, dispose, policy). */
  'inbox/discard': { ids: MessageId[] }
  /** Log-only: leftover steering moved to the next-turn column. */
  'inbox/requeue': { id: MessageId }
}

export type SessionEventType = keyof SessionEventMap

/** One log entry. `seq` is its index in the log. Entries are deep-frozen. */
export interface SessionEvent<K extends SessionEventType = SessionEventType> {
  readonly type: K
  readonly seq: number
  /** `Date.now()` at append. */
  readonly time: number
  readonly data: SessionEventMap[K]
  /**
   * `true` on events of a type registered `ignorable`
   * (`ctx.sessions.registerType(type, { ignorable: true })`); absent
   * otherwise. Persistence backends store it with the event, so a later load
   * that does not know the type accepts the event as log-only instead of
   * refusing the session (R-PER-4).
   */
  readonly ignorable?: true
}

/** A union over every event type, for `switch (event.type)` narrowing. */
export type AnySessionEvent = { [K in SessionEventType]: SessionEvent<K> }[SessionEventType]

/** The `version` a fresh session writes into its `session/meta`; it gates format changes (R-PER-4). */
export const SESSION_FORMAT_VERSION = 1

/** The session meta of a fresh session, as `create()` receives it. */
export interface SessionMetaInput {
  cwd?: string
  parentSession?: SessionId
}
