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
  type Context,
  type Model,
  type ToolCall,
} from '@mariozechner/pi-ai'
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

/** A `streamFn` that answers each call with `reply(context)`. */
export function scriptedStream(reply: (context: Context) => PiReply): StreamFn {
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
    stream.push({ type: 'start', partial: output })
    const answer = reply(context)
    if ('text' in answer) {
      const block = { type: 'text' as const, text: '' }
      output.content.push(block)
      stream.push({ type: 'text_start', contentIndex: 0, partial: output })
      for (const delta of answer.text) {
        block.text += delta
        stream.push({ type: 'text_delta', contentIndex: 0, delta, partial: output })
      }
      stream.push({ type: 'text_end', contentIndex: 0, content: block.text, partial: output })
    } else {
      answer.toolCalls.forEach((spec, index) => {
        const toolCall: ToolCall = { type: 'toolCall', id: `call_${call}_${index}`, name: spec.name, arguments: {} }
        output.content.push(toolCall)
        stream.push({ type: 'toolcall_start', contentIndex: index, partial: output })
        const json = JSON.stringify(spec.arguments)
        // Fragments of 8 characters, as dsh's ScriptedModel streams arguments.
        for (let at = 0; at < json.length; at += 8) {
          stream.push({ type: 'toolcall_delta', contentIndex: index, delta: json.slice(at, at + 8), partial: output })
        }
        toolCall.arguments = spec.arguments
        stream.push({ type: 'toolcall_end', contentIndex: index, toolCall, partial: output })
      })
      output.stopReason = 'toolUse'
    }
    const reason = output.stopReason === 'toolUse' ? 'toolUse' : 'stop'
    stream.push({ type: 'done', reason, message: output })
    stream.end(output)
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

export function agent(reply: (context: Context) => PiReply, tools: AgentTool<any>[] = []): Agent {
  return new Agent({
    initialState: { systemPrompt: 'You are a coding agent running a benchmark.', model: MODEL, tools },
    streamFn: scriptedStream(reply),
    toolExecution: 'parallel',
  })
}
