import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import Retry from '@deepseek-ai/dsh-llm-retry'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
// The real adapter over real HTTP: how its failure classes meet the default budgets.
import { OpenAiAdapter, type ProviderConfig } from '@deepseek-ai/dsh-llm-openai'
import { FakeProvider, openAiChunk as chunk, spine, sse, trace } from '@deepseek-ai/dsh-testkit'

let server: FakeProvider

beforeEach(async () => {
  server = await FakeProvider.start()
})

afterEach(async () => {
  await server.stop()
})

/** The spine with the OpenAI adapter as provider `fake` and dsh-llm-retry on its default budgets (short delays). */
async function agentOn(provider: Partial<ProviderConfig>, env: Record<string, string> = {}) {
  const s = await spine()
  const adapter = new OpenAiAdapter({ name: 'fake', baseUrl: server.url, apiKey: 'sk-retry-e2e-0123456789', ...provider }, { env })
  s.root.llm.registerAdapter(['fake'], adapter)
  await s.root.plugin(Retry, { baseDelayMs: 1, maxDelayMs: 5 })
  return s.agent('a', { provider: 'fake', model: 'test-model' })
}

const lifecycle = (events: readonly AnySessionEvent[]) => events.filter((e) => /^(step|turn|llm)\//.test(e.type))

describe('dsh-llm-openai failures under the default retry budgets', () => {
  it('a server that never sends headers: TIMEOUT, retried once, then the turn ends with it', async () => {
    const never = () => {
      // Accepts the request and never answers.
    }
    server.handle(never, never, never)
    const a = await agentOn({ requestTimeoutMs: 20 })
    a.followup('hello')
    await a.whenIdle()
    expect(trace(a.session).filter((line) => /^(step|turn|llm|assistant\/message)/.test(line))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'assistant/message "" error TIMEOUT',
      'step/end 1.1',
      'llm/retry',
      'step/start 1.2',
      'assistant/message "" error TIMEOUT',
      'step/end 1.2',
      'turn/end 1 error TIMEOUT',
    ])
    expect(a.status).toBe('idle')
  })

  it('two tool calls with one id: MALFORMED_STREAM, not retried, and the logged message is empty', async () => {
    const call = (index: number, name: string) => ({
      tool_calls: [{ index, id: 'call_same', type: 'function', function: { name, arguments: '{"text":"x"}' } }],
    })
    server.handle(sse([chunk(call(0, 'echo')), chunk(call(1, 'echo')), chunk({}, 'tool_calls')]))
    const a = await agentOn({})
    a.followup('hello')
    await a.whenIdle()
    expect(server.requests).toHaveLength(1)
    expect(trace(a.session).filter((line) => /^(step|turn|llm|assistant\/message|tool)/.test(line))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'assistant/message "" error MALFORMED_STREAM',
      'step/end 1.1',
      'turn/end 1 error MALFORMED_STREAM',
    ])
    expect(a.status).toBe('idle')
  })

  it('an API key that an HTTP header cannot carry: INVALID_CONFIG, nothing sent, not retried, the key nowhere in the log', async () => {
    const key = 'sk-zq\u2014xv-9876543210'
    const a = await agentOn({ apiKey: undefined, apiKeyEnv: 'FAKE_KEY' }, { FAKE_KEY: key })
    a.followup('hello')
    await a.whenIdle()
    expect(server.requests).toEqual([])
    expect(lifecycle(a.session.events).map((e) => e.type)).toEqual(['turn/start', 'step/start', 'step/end', 'turn/end'])
    const end = a.session.events.at(-1) as AnySessionEvent & { type: 'turn/end' }
    expect(end.data.reason).toEqual({
      kind: 'error',
      failure: {
        code: 'INVALID_CONFIG',
        message:
          'the API key in the FAKE_KEY environment variable contains the non-ASCII character U+2014 at position 6; API keys are printable ASCII, so it was probably pasted with a typographic dash or quote, or with a stray space or line break',
      },
    })
    const log = JSON.stringify(a.session.events)
    expect([log.includes('sk-zq'), log.includes('xv-9876543210')]).toEqual([false, false])
  })
})
