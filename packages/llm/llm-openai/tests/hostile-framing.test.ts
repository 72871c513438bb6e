import { assemble, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { call, useFakeProvider } from './support/fixture'
import { collect } from './support/collect'
import { openAiChunk as chunk, openStream } from '@deepseek-ai/dsh-testkit'

const fixture = useFakeProvider('sk-framing-test-0123456789')

/**
 * One answer in every framing liberty the SSE format allows, and one it does not: a comment,
 * CRLF line ends, `data:` without its space, interleaved tool-call fragments, a multi-byte
 * character, and an event after `[DONE]` that must be ignored.
 */
const body = Buffer.from(
  [
    ': keep-alive\r\n\r\n',
    `data:${JSON.stringify(chunk({ content: 'é✓' }))}\r\n\r\n`,
    `data: ${JSON.stringify(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'x', arguments: '{"a"' } }] }))}\r\n\r\n`,
    `data: ${JSON.stringify(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'y', arguments: '{}' } }] }))}\n\n`,
    `data: ${JSON.stringify(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }))}\r\n\r\n`,
    `data: ${JSON.stringify(chunk({}, 'tool_calls'))}\r\n\r\n`,
    'data: [DONE]\r\n\r\n',
    `data: ${JSON.stringify(chunk({ content: 'after the end' }))}\r\n\r\n`,
  ].join(''),
)

describe('framing', () => {
  it('the same answer when every byte arrives in a network read of its own', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      // Each byte is handed to the socket, and a turn of the event loop passes, before the next.
      for (let at = 0; at < body.length; at++) {
        await new Promise<void>((resolve) => res.write(body.subarray(at, at + 1), () => resolve()))
        await new Promise<void>((resolve) => setImmediate(resolve))
      }
      res.end()
    })
    expect(assemble((await collect(fixture.adapter.stream(call()))) as StreamChunk[])).toEqual({
      content: [
        { type: 'text', text: 'é✓' },
        { type: 'tool-call', id: 'call_a', name: 'x', arguments: '{"a":1}' },
        { type: 'tool-call', id: 'call_b', name: 'y', arguments: '{}' },
      ],
      finishReason: { kind: 'tool-calls' },
    })
  })
})
