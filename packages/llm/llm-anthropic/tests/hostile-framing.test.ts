import { assemble, CallId, createUserMessage } from '@deepseek-ai/dsh-llm'
import { FakeProvider, openStream } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { collect, wire, type WireEvent } from './support/wire'

let server: FakeProvider
beforeEach(async () => {
  server = await FakeProvider.start()
})
afterEach(async () => {
  await server.stop()
})

const event = (e: WireEvent, end = '\r\n') => `event:${e.type}${end}data:${JSON.stringify(e)}${end}${end}`

/**
 * One answer in every framing liberty the SSE format allows: a comment, CRLF and LF line ends,
 * fields without their space, tool-call blocks whose deltas interleave, a multi-byte character,
 * and events after `message_stop` that must be ignored.
 */
const body = Buffer.from(
  [
    ': hello\r\n\r\n',
    event(wire.start({ input_tokens: 5, output_tokens: 1 })),
    event(wire.text(0)),
    event(wire.textDelta(0, 'é✓'), '\n'),
    event(wire.stop(0)),
    event(wire.toolUse(1, 'toolu_a', 'x')),
    event(wire.toolUse(2, 'toolu_b', 'y')),
    event(wire.json(1, '{"a"')),
    event(wire.json(2, '{}')),
    event(wire.json(1, ':1}')),
    event(wire.stop(2)),
    event(wire.stop(1)),
    event(wire.delta('tool_use', { output_tokens: 9 })),
    event(wire.end()),
    event(wire.text(3)),
    event(wire.textDelta(3, 'after the end')),
  ].join(''),
)

describe('framing', () => {
  it('the same answer when every byte arrives in a network read of its own', async () => {
    server.handle(async (_request, res) => {
      openStream(res)
      // Each byte is handed to the socket, and a turn of the event loop passes, before the next.
      for (let at = 0; at < body.length; at++) {
        await new Promise<void>((resolve) => res.write(body.subarray(at, at + 1), () => resolve()))
        await new Promise<void>((resolve) => setImmediate(resolve))
      }
      res.end()
    })
    const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-framing-0123456789' })
    expect(assemble(await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: [createUserMessage('hi')] })))).toEqual({
      content: [
        { type: 'text', text: 'é✓' },
        { type: 'tool-call', id: CallId('toolu_a'), name: 'x', arguments: '{"a":1}' },
        { type: 'tool-call', id: CallId('toolu_b'), name: 'y', arguments: '{}' },
      ],
      usage: { inputTokens: 5, outputTokens: 9 },
      finishReason: { kind: 'tool-calls' },
    })
  })
})
