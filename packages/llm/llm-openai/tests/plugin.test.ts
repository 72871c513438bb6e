import LlmService, { assemble, createUserMessage, LlmError } from '@deepseek-ai/dsh-llm'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import OpenAiProviders, { OpenAiConfigError, type OpenAiConfig } from '../src'
import { collect } from './support/collect'
import { FakeProvider, openAiChunk as chunk, sse, openAiUsageChunk as usageChunk } from '@deepseek-ai/dsh-testkit'

let server: FakeProvider
let root: Context

beforeEach(async () => {
  server = await FakeProvider.start()
  root = new Context()
  await root.plugin(LlmService)
})

afterEach(async () => {
  await server.stop()
})

const config = (): OpenAiConfig => ({
  providers: [
    'deepseek',
    {
      name: 'local',
      baseUrl: server.url,
      models: { 'qwen3-32b': { contextWindow: 32_768, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' } },
    },
  ],
})

describe('the plugin on ctx.llm', () => {
  it('registers one adapter per configured provider, and unregisters them when disposed', async () => {
    const fiber = root.plugin(OpenAiProviders, config())
    await fiber
    expect(root.llm.providers()).toEqual(['deepseek', 'local'])
    await fiber.dispose()
    expect(root.llm.providers()).toEqual([])
  })

  it('a prepared call gets the configured capabilities, fills the default effort and sends it', async () => {
    await root.plugin(OpenAiProviders, config())
    const call = await root.llm.prepareCall({ provider: 'local', model: 'qwen3-32b' })
    expect({ config: call.config, model: call.model }).toEqual({
      config: { provider: 'local', model: 'qwen3-32b', reasoningEffort: 'low' },
      model: { id: 'qwen3-32b', contextWindow: 32_768, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' },
    })
    server.handle(
      sse([
        chunk({ reasoning_content: 'Short.' }),
        chunk({ content: 'Hi there.' }, 'stop'),
        usageChunk({ prompt_tokens: 20, completion_tokens: 6, prompt_tokens_details: { cached_tokens: 16 }, completion_tokens_details: { reasoning_tokens: 2 } }),
      ]),
    )
    const chunks = await collect(call.stream({ system: 'Be brief.', messages: [createUserMessage('hello')] }))
    expect(server.requests[0]!.body).toEqual({
      model: 'qwen3-32b',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
      ],
      reasoning_effort: 'low',
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(assemble(chunks)).toEqual({
      content: [
        { type: 'reasoning', text: 'Short.' },
        { type: 'text', text: 'Hi there.' },
      ],
      usage: { inputTokens: 4, outputTokens: 4, cacheReadTokens: 16, reasoningTokens: 2 },
      finishReason: { kind: 'stop' },
    })
  })

  it('an effort the model does not declare is refused by ctx.llm before anything is sent', async () => {
    await root.plugin(OpenAiProviders, config())
    const error = await root.llm.prepareCall({ provider: 'local', model: 'qwen3-32b', reasoningEffort: 'max' }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(LlmError)
    expect((error as LlmError).code).toBe('INVALID_CONFIG')
    expect(server.requests).toEqual([])
  })

  it('a provider failure reaches the ctx.llm consumer as a classified error finish', async () => {
    await root.plugin(OpenAiProviders, config())
    server.handle((_request, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '3' })
      res.end(JSON.stringify({ error: { message: 'overloaded' } }))
    })
    const chunks = await collect(root.llm.stream({ provider: 'local', model: 'qwen3-32b', messages: [createUserMessage('hi')] }))
    expect(chunks).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: { code: 'SERVER', status: 503, retryAfterMs: 3000, message: 'local had a server error (HTTP 503: overloaded); try again later.' },
        },
      },
    ])
  })

  it('two providers with one name fail the plugin and register nothing', async () => {
    const fiber = root.plugin(OpenAiProviders, { providers: ['deepseek', { preset: 'deepseek' }] })
    const error = await Promise.resolve(fiber).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(OpenAiConfigError)
    expect((error as OpenAiConfigError).message).toBe('two providers are named "deepseek"; give one of them another name')
    expect(root.llm.providers()).toEqual([])
  })
})
