import { assemble, CallId, createAssistantMessage, createToolResultMessage, createUserMessage, type ToolSchema } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { AnthropicAdapter, type PresetName } from '../src'
import { collect } from './support/wire'

// These tests talk to the real provider and run only when its key is set; they check that the wire
// mapping (thinking replayed with its signature, tool results, breakpoints) is accepted, not what the
// model says.

const echo: ToolSchema = {
  name: 'echo',
  description: 'Returns its text argument unchanged.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
}

function liveSuite(preset: PresetName, envVar: string) {
  describe(`live ${preset}`, () => {
    const adapter = new AnthropicAdapter({ preset })
    const model = adapter.defaultModel!

    it.skipIf(!process.env[envVar])('answers a short prompt with text, usage and stop', async () => {
      const chunks = await collect(adapter.stream({ provider: preset, model, messages: [createUserMessage('Reply with the single word: pong')], maxTokens: 2000 }))
      expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
      const answer = assemble(chunks)
      expect(answer.content.some((b) => b.type === 'text')).toBe(true)
      expect(answer.usage!.inputTokens + (answer.usage!.cacheReadTokens ?? 0)).toBeGreaterThan(0)
    }, 120_000)

    it.skipIf(!process.env[envVar])('completes a tool round trip, replaying its thinking', async () => {
      const system = 'When asked to echo something, call the echo tool, then answer with its result.'
      const user = createUserMessage('Echo the word "kiwi".')
      const first = assemble(await collect(adapter.stream({ provider: preset, model, system, tools: [echo], messages: [user], maxTokens: 4000 })))
      expect(first.finishReason).toEqual({ kind: 'tool-calls' })
      const call = first.content.find((b) => b.type === 'tool-call')
      expect(call).toMatchObject({ type: 'tool-call', name: 'echo' })
      const assistant = createAssistantMessage(first.content, { source: { kind: 'model', provider: preset, model } })
      const result = createToolResultMessage({ callId: CallId((call as { id: string }).id), content: 'kiwi' })
      const second = assemble(await collect(adapter.stream({ provider: preset, model, system, tools: [echo], messages: [user, assistant, result], maxTokens: 4000 })))
      expect(second.finishReason).toEqual({ kind: 'stop' })
    }, 240_000)
  })
}

liveSuite('anthropic', 'ANTHROPIC_API_KEY')
liveSuite('deepseek-anthropic', 'DEEPSEEK_API_KEY')
