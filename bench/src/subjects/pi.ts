/**
 * pi-agent-core (`@mariozechner/pi-agent-core`) driven through its public
 * `Agent` with a scripted `streamFn`: the function an app passes to plug in a
 * transport. It answers at zero latency with the same deltas as dsh's
 * `ScriptedModel`, pushed through pi-ai's own `AssistantMessageEventStream`
 * the way pi-ai's providers do (one growing `partial` message, mutated in
 * place). pi-ai's faux provider is not used: it re-serializes the whole
 * context on every call to estimate usage and splits text at random sizes,
 * which would bill the mock, not the loop.
 */
import { Agent, type AgentTool, type StreamFn } from '@mariozechner/pi-agent-core'
import {
  Type,
  createAssistantMessageEventStream,
  type AssistantMessage,
  type AssistantMessageEvent,
  type Context,
  type Model,
  type ToolCall,
} from '@mariozechner/pi-ai'
import { pushInBatches } from '../lib/feed.ts'
import { ANSWER_DELTAS, NOOP_DESCRIPTION, NOOP_TOOL, SLOW_DESCRIPTION, SLOW_TOOL, SLOW_TOOL_MS } from './workload.ts'

/** A model description for the scripted stream; pi's loop only reads it and passes it back. */
export const MODEL: Model<'bench'> = {
  id: 'bench-model',
  name: 'Bench model',
  api: 'bench',
  provider: 'bench',
  baseUrl: 'http://127.0.0.1:0',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 16_384,
}

/** What the scripted model answers: text deltas, or tool calls. */
export type PiReply = { text: readonly string[] } | { toolCalls: ReadonlyArray<{ name: string; arguments: Record<string, unknown> }> }

let callCount = 0

/**
 * The events of one scripted answer, built as they are taken: each delta is
 * added to the `partial` message in place just before its event, as pi-ai's
 * providers do; the last event is `done`.
 */
function* answerEvents(output: AssistantMessage, answer: PiReply, call: number): Generator<AssistantMessageEvent, void, undefined> {
  yield { type: 'start', partial: output }
  if ('text' in answer) {
    const block = { type: 'text' as const, text: '' }
    output.content.push(block)
    yield { type: 'text_start', contentIndex: 0, partial: output }
    for (const delta of answer.text) {
      block.text += delta
      yield { type: 'text_delta', contentIndex: 0, delta, partial: output }
    }
    yield { type: 'text_end', contentIndex: 0, content: block.text, partial: output }
  } else {
    for (let index = 0; index < answer.toolCalls.length; index++) {
      const spec = answer.toolCalls[index]!
      const toolCall: ToolCall = { type: 'toolCall', id: `call_${call}_${index}`, name: spec.name, arguments: {} }
      output.content.push(toolCall)
      yield { type: 'toolcall_start', contentIndex: index, partial: output }
      const json = JSON.stringify(spec.arguments)
      // Fragments of 8 characters, as dsh's ScriptedModel streams arguments.
      for (let at = 0; at < json.length; at += 8) {
        yield { type: 'toolcall_delta', contentIndex: index, delta: json.slice(at, at + 8), partial: output }
      }
      toolCall.arguments = spec.arguments
      yield { type: 'toolcall_end', contentIndex: index, toolCall, partial: output }
    }
    output.stopReason = 'toolUse'
  }
  yield { type: 'done', reason: output.stopReason === 'toolUse' ? 'toolUse' : 'stop', message: output }
}

/**
 * A `streamFn` that answers each call with `reply(context)`. Without `batch`
 * every event is pushed before the stream is returned (the whole answer at
 * once: fine for 20 deltas); with `batch` the events are pushed `batch` at a
 * time, one batch per macrotask, as a provider's read loop pushes them (see
 * `lib/feed.ts`).
 */
export function scriptedStream(reply: (context: Context) => PiReply, batch?: number): StreamFn {
  return (model, context) => {
    const stream = createAssistantMessageEventStream()
    const call = callCount++
    const output: AssistantMessage = {
      role: 'assistant',
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: 'stop',
      timestamp: Date.now(),
    }
    const events = answerEvents(output, reply(context), call)
    if (batch === undefined) {
      for (const event of events) stream.push(event)
      stream.end(output)
    } else {
      pushInBatches(events, (event) => stream.push(event), batch).then(
        () => stream.end(output),
        (error: unknown) => {
          output.stopReason = 'error'
          output.errorMessage = error instanceof Error ? error.message : String(error)
          stream.push({ type: 'error', reason: 'error', error: output })
        },
      )
    }
    return stream
  }
}

/** True when the model is answering tool results. */
export function afterToolResults(context: Context): boolean {
  return context.messages[context.messages.length - 1]?.role === 'toolResult'
}

export const ANSWER: PiReply = { text: ANSWER_DELTAS }

export function toolRound(tool: string, count: number): (context: Context) => PiReply {
  const calls: PiReply = { toolCalls: Array.from({ length: count }, (_, n) => ({ name: tool, arguments: { n } })) }
  return (context) => (afterToolResults(context) ? ANSWER : calls)
}

const args = Type.Object({ n: Type.Number() })

export const noopTool: AgentTool<typeof args> = {
  name: NOOP_TOOL,
  label: 'No-op',
  description: NOOP_DESCRIPTION,
  parameters: args,
  executionMode: 'parallel',
  execute: async () => ({ content: [{ type: 'text', text: 'ok' }], details: {} }),
}

export const slowTool: AgentTool<typeof args> = {
  name: SLOW_TOOL,
  label: 'Wait',
  description: SLOW_DESCRIPTION,
  parameters: args,
  executionMode: 'parallel',
  execute: () => new Promise((resolve) => setTimeout(() => resolve({ content: [{ type: 'text', text: 'ok' }], details: {} }), SLOW_TOOL_MS)),
}

/** A pi `Agent` on the scripted stream; `batch`: feed the answers in batches (see `scriptedStream`). */
export function agent(reply: (context: Context) => PiReply, tools: AgentTool<any>[] = [], batch?: number): Agent {
  return new Agent({
    initialState: { systemPrompt: 'You are a coding agent running a benchmark.', model: MODEL, tools },
    streamFn: scriptedStream(reply, batch),
    toolExecution: 'parallel',
  })
}
