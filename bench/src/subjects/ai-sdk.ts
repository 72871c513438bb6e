/**
 * The Vercel AI SDK (`ai@6`) driven the way its docs build an agent loop:
 * `streamText` with tools and a step limit (`stopWhen: stepCountIs(…)`), the
 * conversation kept by the caller (`messages`, extended with
 * `response.messages` after each turn). The model is the SDK's own
 * `MockLanguageModelV3` (from `ai/test`) streaming through its
 * `simulateReadableStream` with no delays: zero latency, the same deltas as
 * dsh's `ScriptedModel`. The mock records every call's options in
 * `doStreamCalls`; the bench empties that array after each turn so that the
 * mock's recording (a copy of the whole prompt per call) is not billed to the
 * SDK, as dsh's model runs with `record: false`.
 */
import { simulateReadableStream, stepCountIs, streamText, tool, type ModelMessage, type StreamTextOnChunkCallback, type ToolSet } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { batchedReadableStream } from '../lib/feed.ts'
import { ANSWER_DELTAS, NOOP_DESCRIPTION, NOOP_TOOL, SLOW_DESCRIPTION, SLOW_TOOL, SLOW_TOOL_MS } from './workload.ts'

type DoStream = MockLanguageModelV3['doStream']
type CallOptions = Parameters<DoStream>[0]
type StreamPart = Awaited<ReturnType<DoStream>>['stream'] extends ReadableStream<infer T> ? T : never

export type AiReply = { text: readonly string[] } | { toolCalls: ReadonlyArray<{ name: string; arguments: Record<string, unknown> }> }

const USAGE = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
}

let callCount = 0

function parts(answer: AiReply): StreamPart[] {
  const call = callCount++
  const out: StreamPart[] = [{ type: 'stream-start', warnings: [] }]
  if ('text' in answer) {
    out.push({ type: 'text-start', id: 't0' })
    for (const delta of answer.text) out.push({ type: 'text-delta', id: 't0', delta })
    out.push({ type: 'text-end', id: 't0' })
    out.push({ type: 'finish', usage: USAGE, finishReason: { unified: 'stop', raw: 'stop' } })
    return out
  }
  answer.toolCalls.forEach((spec, index) => {
    const id = `call_${call}_${index}`
    const json = JSON.stringify(spec.arguments)
    out.push({ type: 'tool-input-start', id, toolName: spec.name })
    // Fragments of 8 characters, as dsh's ScriptedModel streams arguments.
    for (let at = 0; at < json.length; at += 8) out.push({ type: 'tool-input-delta', id, delta: json.slice(at, at + 8) })
    out.push({ type: 'tool-input-end', id })
    out.push({ type: 'tool-call', toolCallId: id, toolName: spec.name, input: json })
  })
  out.push({ type: 'finish', usage: USAGE, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } })
  return out
}

/**
 * The SDK's mock model, answering each call with `reply(options)`. Without
 * `batch` the parts stream through the SDK's `simulateReadableStream` with no
 * delays (one part per pull, all at once: fine for 20 deltas); with `batch`
 * they arrive `batch` per macrotask, as from a network (see `lib/feed.ts`).
 */
export function mockModel(reply: (options: CallOptions) => AiReply, batch?: number): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'bench',
    modelId: 'bench-model',
    doStream: async (options) => ({
      stream:
        batch === undefined
          ? simulateReadableStream({ chunks: parts(reply(options)), initialDelayInMs: null, chunkDelayInMs: null })
          : batchedReadableStream(parts(reply(options)), batch),
    }),
  })
}

export function afterToolResults(options: CallOptions): boolean {
  return options.prompt[options.prompt.length - 1]?.role === 'tool'
}

export const ANSWER: AiReply = { text: ANSWER_DELTAS }

export function toolRound(name: string, count: number): (options: CallOptions) => AiReply {
  const calls: AiReply = { toolCalls: Array.from({ length: count }, (_, n) => ({ name, arguments: { n } })) }
  return (options) => (afterToolResults(options) ? ANSWER : calls)
}

const args = z.object({ n: z.number() })

export const noopTools: ToolSet = {
  [NOOP_TOOL]: tool({ description: NOOP_DESCRIPTION, inputSchema: args, execute: async () => 'ok' }),
}

export const slowTools: ToolSet = {
  [SLOW_TOOL]: tool({
    description: SLOW_DESCRIPTION,
    inputSchema: args,
    execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('ok'), SLOW_TOOL_MS)),
  }),
}

export const SYSTEM = 'You are a coding agent running a benchmark.'

/** A conversation: the caller-kept history an AI SDK agent loop extends turn by turn. */
export class Conversation {
  readonly messages: ModelMessage[] = []

  constructor(
    readonly model: MockLanguageModelV3,
    readonly tools: ToolSet = {},
  ) {}

  /**
   * One turn: the prompt, then model steps and tool calls until the model
   * stops (at most 10 steps). `onStepFinish` and `onChunk` are the SDK's
   * callbacks of the same names.
   */
  async turn(prompt: string, onStepFinish?: () => void, onChunk?: StreamTextOnChunkCallback<ToolSet>): Promise<void> {
    this.messages.push({ role: 'user', content: prompt })
    const result = streamText({
      model: this.model,
      system: SYSTEM,
      messages: this.messages,
      tools: this.tools,
      stopWhen: stepCountIs(10),
      onStepFinish,
      onChunk,
    })
    await result.consumeStream()
    const response = await result.response
    this.messages.push(...response.messages)
    this.model.doStreamCalls.length = 0
  }
}
