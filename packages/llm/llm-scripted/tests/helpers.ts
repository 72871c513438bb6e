import { Context } from 'cordis'
import LlmService, { createUserMessage, type GenerateOptions, type Message, type StreamChunk } from '@deepseek-ai/dsh-llm'
import type { ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'

export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const chunk of stream) out.push(chunk)
  return out
}

/** What iterating a stream raw (without ctx.llm) gives: the chunks, and the error if it threw. */
export async function drain(stream: AsyncIterable<StreamChunk>): Promise<{ chunks: StreamChunk[]; error?: unknown }> {
  const chunks: StreamChunk[] = []
  try {
    for await (const chunk of stream) chunks.push(chunk)
    return { chunks }
  } catch (error) {
    return { chunks, error }
  }
}

export function options(messages: readonly Message[] = [createUserMessage('hi')], extra: Partial<GenerateOptions> = {}): GenerateOptions {
  return { provider: 'scripted', model: 'demo', messages, ...extra }
}

/** A root context with ctx.llm and `model` registered under `scripted`. */
export async function mounted(model: ScriptedModel): Promise<Context> {
  const root = new Context()
  await root.plugin(LlmService)
  root.llm.registerAdapter(['scripted'], model)
  return root
}

export const stop: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }
