import Anthropic from '@anthropic-ai/sdk'
import { assemble, createUserMessage, type ContentBlock, type TokenUsage } from '@deepseek-ai/dsh-llm'
import { FakeProvider, openStream } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { collect, sseText, stream, wire, type WireEvent } from './support/wire'

// The official SDK's stream accumulator is the oracle: the same recorded event streams are served to
// it and to the adapter over HTTP, and what each makes of them is compared field by field.

const apiKey = 'sk-ant-oracle-test-0123456789'
let server: FakeProvider

beforeEach(async () => {
  server = await FakeProvider.start()
})

afterEach(async () => {
  await server.stop()
})

const recorded: Record<string, WireEvent[]> = {
  'thinking, redacted thinking, text and a streamed tool call, with cache counts': [
    wire.start({ input_tokens: 2095, output_tokens: 1, cache_read_input_tokens: 18_432, cache_creation_input_tokens: 512 }),
    wire.thinking(0),
    wire.thinkingDelta(0, 'The user wants the weather. '),
    wire.ping(),
    wire.thinkingDelta(0, 'I will call the tool.'),
    wire.signature(0, 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/='),
    wire.stop(0),
    wire.redacted(1, 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+='),
    wire.stop(1),
    wire.text(2),
    wire.textDelta(2, 'Let me check '),
    wire.textDelta(2, 'the weather in 東京 "now".'),
    wire.stop(2),
    wire.toolUse(3, 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'get_weather'),
    wire.json(3, ''),
    wire.json(3, '{"location": "Tok'),
    wire.json(3, 'yo", "unit": "celsius", "days": [1, 2]'),
    wire.json(3, '}'),
    wire.stop(3),
    wire.delta('tool_use', { output_tokens: 189 }),
    wire.end(),
  ],
  'a plain answer with pings, ended by end_turn': [
    wire.start({ input_tokens: 10, output_tokens: 1 }),
    wire.ping(),
    wire.text(0),
    wire.textDelta(0, 'Hello'),
    wire.ping(),
    wire.textDelta(0, '!'),
    wire.stop(0),
    wire.delta('end_turn', { output_tokens: 12 }),
    wire.end(),
  ],
  'two tool calls, one without input deltas, cut at max_tokens': [
    wire.start({ input_tokens: 40, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }),
    wire.toolUse(0, 'toolu_a', 'clock'),
    wire.stop(0),
    wire.toolUse(1, 'toolu_b', 'search'),
    wire.json(1, '{"q":"x"}'),
    wire.stop(1),
    wire.delta('max_tokens', { output_tokens: 64 }),
    wire.end(),
  ],
}

type SdkMessage = Anthropic.Message

/** What the SDK's final message means in the spine's terms; tool inputs as objects, to compare with parsed arguments. */
function fromSdk(message: SdkMessage) {
  const content = message.content.map((block) => {
    switch (block.type) {
      case 'thinking':
        return { type: 'reasoning', text: block.thinking, signature: block.signature }
      case 'redacted_thinking':
        return { type: 'redacted-reasoning', data: block.data }
      case 'text':
        return { type: 'text', text: block.text }
      case 'tool_use':
        return { type: 'tool-call', id: block.id, name: block.name, input: block.input }
      default:
        return { type: `unexpected ${block.type}` }
    }
  })
  const usage: TokenUsage = { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens }
  if (typeof message.usage.cache_read_input_tokens === 'number') usage.cacheReadTokens = message.usage.cache_read_input_tokens
  if (typeof message.usage.cache_creation_input_tokens === 'number') usage.cacheWriteTokens = message.usage.cache_creation_input_tokens
  return { content, usage, stopReason: message.stop_reason }
}

function fromAdapter(content: ContentBlock[]) {
  return content.map((block) => (block.type === 'tool-call' ? { type: 'tool-call', id: block.id, name: block.name, input: JSON.parse(block.arguments) } : block))
}

const finishes = { end_turn: 'stop', tool_use: 'tool-calls', max_tokens: 'max-tokens' } as Record<string, string>

describe('the adapter agrees with the official SDK stream accumulator on the same bodies', () => {
  for (const [title, events] of Object.entries(recorded)) {
    it(title, async () => {
      server.handle(stream(events), stream(events))
      const client = new Anthropic({ apiKey, baseURL: server.origin, maxRetries: 0 })
      const sdk = fromSdk(await client.messages.stream({ model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] }).finalMessage())
      const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey })
      const ours = assemble(await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: [createUserMessage('hi')] })))
      expect({ content: fromAdapter(ours.content), usage: ours.usage, finish: ours.finishReason.kind }).toEqual({
        content: sdk.content,
        usage: sdk.usage,
        finish: finishes[sdk.stopReason ?? ''],
      })
      // Both clients sent their request to the same endpoint with the same credentials.
      expect(server.requests.map((r) => [r.url, r.headers['x-api-key']])).toEqual([
        ['/v1/messages', apiKey],
        ['/v1/messages', apiKey],
      ])
    })
  }
})

describe('an error event is an error whatever its data, as the SDK reads it (by the event name)', () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    [
      'JSON without the top-level type',
      '{"error":{"type":"billing_error","message":"Your credit balance is too low"}}',
      { code: 'AUTH', message: 'claude sent an error in the stream: Your credit balance is too low; billing_error', requestId: 'req_test' },
    ],
    [
      'plain text',
      'upstream overloaded',
      { code: 'SERVER', message: 'claude sent an error in the stream: upstream overloaded', requestId: 'req_test' },
    ],
  ]
  for (const [title, data, failure] of cases) {
    it(title, async () => {
      const body = async (_request: unknown, res: import('node:http').ServerResponse) => {
        openStream(res, { 'request-id': 'req_test' })
        res.write(sseText([wire.start(), wire.text(0), wire.textDelta(0, 'Half')]))
        res.end(`event: error\ndata: ${data}\n\n`)
      }
      server.handle(body, body)
      const client = new Anthropic({ apiKey, baseURL: server.origin, maxRetries: 0 })
      const sdk = await client.messages
        .stream({ model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] })
        .finalMessage()
        .then(
          () => 'no error',
          (error: Error) => error.message,
        )
      const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey })
      const ours = await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: [createUserMessage('hi')] }))
      // The SDK fails with the provider's words; so does the adapter, classified, after the text that came before.
      expect(sdk).toContain(data.includes('credit') ? 'Your credit balance is too low' : data)
      expect(ours.slice(1)).toEqual([
        { type: 'text-delta', index: 0, text: 'Half' },
        { type: 'finish', reason: { kind: 'error', failure } },
      ])
    })
  }
})
