import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  CallId,
  type ContentBlock,
  type StreamChunk,
  type ToolSchema,
} from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { OpenAiAdapter, type PresetName } from '../src'
import { collect } from './support/collect'

// These tests talk to a real provider and run only when its key is set; they check that the
// wire mapping is accepted by the real API, not what the model says.

const echo: ToolSchema = {
  name: 'echo',
  description: 'Returns its text argument unchanged.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
}

/** Builds the assistant content the way the loop's assembler would, enough for a round trip. */
function contentOf(chunks: StreamChunk[]): ContentBlock[] {
  const blocks = new Map<number, ContentBlock>()
  for (const chunk of chunks) {
    if (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') {
      const kind = chunk.type === 'text-delta' ? 'text' : 'reasoning'
      const block = blocks.get(chunk.index) as { text: string } | undefined
      if (block) block.text += chunk.text
      else blocks.set(chunk.index, { type: kind, text: chunk.text })
    } else if (chunk.type === 'tool-call-delta') {
      const block = blocks.get(chunk.index) as { arguments: string } | undefined
      if (block) block.arguments += chunk.argumentsDelta
      else blocks.set(chunk.index, { type: 'tool-call', id: chunk.id!, name: chunk.name!, arguments: chunk.argumentsDelta })
    }
  }
  return [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block)
}

function liveSuite(preset: PresetName, envVar: string) {
  describe(`live ${preset}`, () => {
    const adapter = new OpenAiAdapter({ preset, requestTimeoutMs: 60_000, idleTimeoutMs: 60_000 })
    const model = adapter.defaultModel!

    it.skipIf(!process.env[envVar])('answers a short prompt with text, usage and stop', async () => {
      const chunks = await collect(
        adapter.stream({ provider: preset, model, messages: [createUserMessage('Reply with the single word: pong')], maxTokens: 20 }),
      )
      expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
      expect(chunks.some((c) => c.type === 'text-delta')).toBe(true)
      const usage = chunks.find((c) => c.type === 'usage')
      expect(usage && usage.type === 'usage' && usage.usage.inputTokens + (usage.usage.cacheReadTokens ?? 0)).toBeGreaterThan(0)
    }, 90_000)

    it.skipIf(!process.env[envVar])('completes a tool round trip', async () => {
      const system = 'When asked to echo something, call the echo tool, then answer with its result.'
      const user = createUserMessage('Echo the word "kiwi".')
      const first = await collect(adapter.stream({ provider: preset, model, system, tools: [echo], messages: [user] }))
      expect(first.at(-1)).toEqual({ type: 'finish', reason: { kind: 'tool-calls' } })
      const content = contentOf(first)
      const call = content.find((b) => b.type === 'tool-call')
      expect(call).toMatchObject({ type: 'tool-call', name: 'echo' })
      const assistant = createAssistantMessage(content, { source: { kind: 'model', provider: preset, model } })
      const result = createToolResultMessage({ callId: CallId((call as { id: string }).id), content: 'kiwi' })
      const second = await collect(
        adapter.stream({ provider: preset, model, system, tools: [echo], messages: [user, assistant, result] }),
      )
      expect(second.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    }, 180_000)
  })
}

liveSuite('deepseek', 'DEEPSEEK_API_KEY')
liveSuite('openai', 'OPENAI_API_KEY')
