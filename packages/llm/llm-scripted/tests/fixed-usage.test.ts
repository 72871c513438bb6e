import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import LlmService, { createUserMessage, HISTORY, type Message, type StreamChunk, type TokenUsage } from '@deepseek-ai/dsh-llm'
import ScriptedPlugin, { ScriptedModel, ScriptError } from '@deepseek-ai/dsh-llm-scripted'
import { collect, drain, options, stop } from './helpers'

const fixed: TokenUsage = { inputTokens: 100, outputTokens: 20 }

/** The usage chunks of one call. */
async function usages(model: ScriptedModel, messages: readonly Message[] = [createUserMessage('hi')]): Promise<TokenUsage[]> {
  const { chunks } = await drain(model.stream(options(messages)))
  return chunks.flatMap((chunk) => (chunk.type === 'usage' ? [chunk.usage] : []))
}

describe('a fixed usage (the usage option set to a TokenUsage)', () => {
  it('reports that usage on every call whose reply gives none, whatever the request and the reply', async () => {
    const model = new ScriptedModel({
      script: ['short', { text: 'a much longer answer than the first one', reasoning: 'think' }, { toolCalls: [{ name: 'read_file', arguments: { path: 'a.md' } }] }],
      respond: () => ({ text: 'from the responder' }),
      usage: fixed,
    })
    const long = Array.from({ length: 50 }, (_, i) => createUserMessage(`message ${i} ${'x'.repeat(i * 10)}`))
    const seen = [await usages(model), await usages(model, long), await usages(model, long), await usages(model)]
    expect(seen).toEqual([[fixed], [fixed], [fixed], [fixed]])
  })

  it('streams it where the estimate would be: after the content, before the finish', async () => {
    const model = new ScriptedModel({ script: ['one two'], usage: { inputTokens: 7, outputTokens: 2, cacheReadTokens: 5, reasoningTokens: 0 } })
    expect(await collect(model.stream(options()))).toEqual([
      { type: 'text-delta', index: 0, text: 'one' },
      { type: 'text-delta', index: 0, text: ' two' },
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 2, cacheReadTokens: 5, reasoningTokens: 0 } },
      stop,
    ])
  })

  it("leaves a reply's own usage, or its usage: false, as the reply says", async () => {
    const own = { inputTokens: 1, outputTokens: 1 }
    const model = new ScriptedModel({ script: [{ text: 'a', usage: own }, { text: 'b', usage: false }, 'c'], usage: fixed })
    expect([await usages(model), await usages(model), await usages(model)]).toEqual([[own], [], [fixed]])
  })

  it('never reads the history (nothing is counted)', async () => {
    const reads: string[] = []
    const entries = [createUserMessage('one'), createUserMessage('two')]
    Object.defineProperty(entries, HISTORY, { value: {} })
    const watched = new Proxy(entries, {
      get(target, key, receiver) {
        if (typeof key === 'string') reads.push(key)
        return Reflect.get(target, key, receiver)
      },
    })
    const model = new ScriptedModel({ script: ['ok'], usage: fixed, record: false })
    expect(await usages(model, watched)).toEqual([fixed])
    expect(reads).toEqual([])
  })

  it('is a copy taken when the model is made, and each call gets a fresh object of its own', async () => {
    const given = { inputTokens: 100, outputTokens: 20 }
    const model = new ScriptedModel({ script: ['a', 'b'], usage: given })
    given.inputTokens = 999
    const [first] = await usages(model)
    first!.outputTokens = 0
    const [second] = await usages(model)
    expect([second, Object.isFrozen(first)]).toEqual([fixed, false])
  })

  it('refuses anything but true, false or a TokenUsage of non-negative integers with INVALID_SCRIPT, naming the problem', () => {
    const refusal = (usage: unknown): string => {
      try {
        new ScriptedModel({ usage: usage as TokenUsage })
      } catch (error) {
        return error instanceof ScriptError ? `${error.code}: ${error.message.replace(/^usage must be true \(an estimate\), false \(none\) or a TokenUsage \{[^}]*\}/, '…')}` : String(error)
      }
      return 'accepted'
    }
    expect([
      refusal(null),
      refusal('fixed'),
      refusal([100, 20]),
      refusal({ inputTokens: 100 }),
      refusal({ inputTokens: -1, outputTokens: 20 }),
      refusal({ inputTokens: 100, outputTokens: 2.5 }),
      refusal({ inputTokens: 100, outputTokens: 20, cacheReadTokens: '5' }),
      refusal({ inputTokens: 100, outputTokens: 20, cost: 3 }),
      refusal({ inputTokens: 0, outputTokens: 0 }),
    ]).toEqual([
      'INVALID_SCRIPT: … (got null)',
      'INVALID_SCRIPT: … (got string)',
      'INVALID_SCRIPT: … (got an array)',
      'INVALID_SCRIPT: …: usage.outputTokens is missing',
      'INVALID_SCRIPT: …: usage.inputTokens must be a non-negative integer (got -1)',
      'INVALID_SCRIPT: …: usage.outputTokens must be a non-negative integer (got 2.5)',
      'INVALID_SCRIPT: …: usage.cacheReadTokens must be a non-negative integer (got "5")',
      'INVALID_SCRIPT: …: unknown field "cost"',
      'accepted',
    ])
  })

  it('is a plugin config value too; a bad one fails the plugin start with INVALID_SCRIPT and registers nothing', async () => {
    const root = new Context()
    await root.plugin(LlmService)
    const bad = root.plugin(ScriptedPlugin, { provider: 'bad', usage: { inputTokens: 1, outputTokens: 2, cost: 3 } as never })
    await expect(bad).rejects.toMatchObject({ code: 'INVALID_SCRIPT' })
    await root.plugin(ScriptedPlugin, { script: ['hi'], usage: fixed })
    const chunks: StreamChunk[] = await collect(root.llm.stream({ provider: 'scripted', model: 'm', messages: [] }))
    expect([root.llm.providers(), chunks]).toEqual([['scripted'], [{ type: 'text-delta', index: 0, text: 'hi' }, { type: 'usage', usage: fixed }, stop]])
  })
})
