import { AgentError, type ContinuationDecision, type PromptDecision } from '@deepseek-ai/dsh-agent'
import { contentProblem, type AssistantMessage, type UserMessage } from '@deepseek-ai/dsh-llm'

/**
 * The checks of what `agent/*` listeners hand back to the loop.
 *
 * A malformed return is a plugin's bug: it fails the turn with
 * `INVALID_DECISION` (an ordinary turn failure, R-ERR-1), never the agent.
 * The loop checks here what the log would otherwise refuse later (a user
 * message without a tagged source, say), so that the plugin, not the log,
 * is named.
 */
export function pluginBug(event: string, problem: string): AgentError {
  return new AgentError('INVALID_DECISION', `${event}: a listener returned a malformed value (${problem})`)
}

/** An `agent/prompt-submit` decision: `allow` with content and contexts, or `block` with a reason. */
export function checkPromptDecision(decision: PromptDecision | undefined): PromptDecision {
  if (decision?.kind === 'block') {
    if (typeof decision.reason !== 'string') throw pluginBug('agent/prompt-submit', 'a block decision needs a reason string')
    return decision
  }
  if (decision?.kind !== 'allow') throw pluginBug('agent/prompt-submit', 'must return { kind: "allow" | "block" }')
  const problem = contentProblem(decision.content, 'agent/prompt-submit content')
  if (problem) throw pluginBug('agent/prompt-submit', problem)
  if (!Array.isArray(decision.additionalContexts)) throw pluginBug('agent/prompt-submit', 'additionalContexts must be an array')
  for (const [i, context] of decision.additionalContexts.entries()) {
    if (context === null || typeof context !== 'object' || typeof context.label !== 'string') {
      throw pluginBug('agent/prompt-submit', `additionalContexts[${i}] must be { label, content }`)
    }
    const contextProblem = contentProblem(context.content, `additionalContexts[${i}].content`)
    if (contextProblem) throw pluginBug('agent/prompt-submit', contextProblem)
  }
  return decision
}

/** The messages of an `agent/pre-step` `enter` decision: user messages with distinct ids, tagged sources and valid content. */
export function checkEntered(messages: unknown): readonly UserMessage[] {
  if (!Array.isArray(messages)) throw pluginBug('agent/pre-step', 'enter.messages must be an array')
  const ids = new Set<string>()
  for (const [i, message] of messages.entries()) {
    const id = (message as UserMessage | null)?.id
    if (ids.has(id!)) throw pluginBug('agent/pre-step', `enter.messages[${i}] repeats message id ${JSON.stringify(id)}`)
    ids.add(id!)
    if (message === null || typeof message !== 'object' || (message as UserMessage).role !== 'user' || typeof (message as UserMessage).id !== 'string') {
      throw pluginBug('agent/pre-step', `enter.messages[${i}] must be a user message with an id (createUserMessage)`)
    }
    // Checked here so that a plugin's malformed message fails the turn (INVALID_DECISION), not the log (APPEND_REFUSED).
    const source = (message as UserMessage).source as { kind?: unknown } | null | undefined
    if (source === null || typeof source !== 'object' || typeof source.kind !== 'string' || !source.kind) {
      throw pluginBug('agent/pre-step', `enter.messages[${i}].source must be a tagged source such as { kind: 'user' } (createUserMessage)`)
    }
    const problem = contentProblem((message as UserMessage).content, `enter.messages[${i}].content`)
    if (problem) throw pluginBug('agent/pre-step', problem)
  }
  return messages as UserMessage[]
}

/** What `agent/step-result` returned: an assistant message with valid content. */
export function checkAssistant(message: AssistantMessage): void {
  if (message === null || typeof message !== 'object' || message.role !== 'assistant') {
    throw pluginBug('agent/step-result', 'must return an assistant message')
  }
  const problem = contentProblem(message.content, 'agent/step-result content')
  if (problem) throw pluginBug('agent/step-result', problem)
  // Results could not say which of two calls with one id they answer (the log refuses such a message,
  // which would fail the agent for good): the listener's bug, as any malformed return.
  const content = message.content
  for (let i = 1; i < content.length; i++) {
    const block = content[i]!
    if (block.type !== 'tool-call') continue
    for (let j = 0; j < i; j++) {
      const earlier = content[j]!
      if (earlier.type === 'tool-call' && earlier.id === block.id) {
        throw pluginBug('agent/step-result', `content[${i}] repeats the tool call id ${JSON.stringify(String(block.id).slice(0, 64))} of content[${j}]`)
      }
    }
  }
}

/**
 * An `agent/turn-continuation` decision: `continue` (its `reason`, when given,
 * a string), or `stop` naming who stopped. A blank reason is no reason: it
 * would become a steering message with nothing in it, which providers refuse.
 */
export function checkContinuation(decision: ContinuationDecision | undefined): ContinuationDecision {
  if (decision?.kind === 'continue') {
    const reason: unknown = decision.reason
    if (reason === undefined) return decision
    if (typeof reason !== 'string') throw pluginBug('agent/turn-continuation', 'a continue reason must be a string')
    return reason.trim() ? decision : CONTINUE_WITHOUT_REASON
  }
  if (decision?.kind === 'stop' && typeof decision.by === 'string' && decision.by) return decision
  throw pluginBug('agent/turn-continuation', 'must return { kind: "continue" } or { kind: "stop", by }')
}

const CONTINUE_WITHOUT_REASON: ContinuationDecision = Object.freeze({ kind: 'continue' })
