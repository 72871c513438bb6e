import { assemble, createUserMessage, type GenerateOptions } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { OpenAiAdapter } from '../src'
import { call, useFakeProvider } from './support/fixture'
import { collect } from './support/collect'
import { FakeProvider, openAiChunk as chunk, openStream, send, sse, openAiUsageChunk as usageChunk } from '@deepseek-ai/dsh-testkit'

const fixture = useFakeProvider('sk-stream-test-key')

describe('streaming happy paths', () => {
  it('streams text deltas into one text block and finishes with stop', async () => {
    fixture.server.handle(
      sse([
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Hel' }),
        chunk({ content: 'lo!' }),
        chunk({}, 'stop'),
      ]),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'Hel' },
      { type: 'text-delta', index: 0, text: 'lo!' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
  })

  it('streams DeepSeek reasoning_content before the answer, with DeepSeek usage and cache hits (non-overlapping)', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      // DeepSeek keeps the connection alive with SSE comments while the request is queued.
      res.write(': keep-alive\n\n')
      await send(res, chunk({ role: 'assistant', content: null, reasoning_content: '' }))
      await send(res, chunk({ content: null, reasoning_content: '9.11 vs 9.8: ' }))
      await send(res, chunk({ content: null, reasoning_content: 'compare tenths.' }))
      await send(res, chunk({ content: '9.8 is greater.', reasoning_content: null }))
      await send(
        res,
        chunk({ content: '', reasoning_content: null }, 'stop', {
          usage: {
            prompt_tokens: 1200,
            completion_tokens: 300,
            total_tokens: 1500,
            prompt_tokens_details: { cached_tokens: 1024 },
            completion_tokens_details: { reasoning_tokens: 250 },
            prompt_cache_hit_tokens: 1024,
            prompt_cache_miss_tokens: 176,
          },
        }),
      )
      await send(res, '[DONE]')
      res.end()
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'reasoning-delta', index: 0, text: '9.11 vs 9.8: ' },
      { type: 'reasoning-delta', index: 0, text: 'compare tenths.' },
      { type: 'text-delta', index: 1, text: '9.8 is greater.' },
      { type: 'usage', usage: { inputTokens: 176, outputTokens: 50, cacheReadTokens: 1024, reasoningTokens: 250 } },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
  })

  it('reads reasoning from a `reasoning` field too (Ollama, newer vLLM)', async () => {
    fixture.server.handle(sse([chunk({ reasoning: 'Hmm.' }), chunk({ content: 'Yes.' }), chunk({}, 'stop')]))
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'Hmm.' },
      { type: 'text-delta', index: 1, text: 'Yes.' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
  })

  it('streams parallel tool calls interleaved by index: id and name first, argument fragments after', async () => {
    fixture.server.handle(
      sse([
        chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '{"pa' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: 'th":"."}' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"a.txt"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk({
          prompt_tokens: 500,
          completion_tokens: 40,
          total_tokens: 540,
          prompt_tokens_details: { cached_tokens: 384, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
        }),
      ]),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'call_a', name: 'read_file', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 1, id: 'call_b', name: 'list_dir', argumentsDelta: '{"pa' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"path":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'th":"."}' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"a.txt"}' },
      { type: 'usage', usage: { inputTokens: 116, outputTokens: 40, cacheReadTokens: 384, reasoningTokens: 0 } },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
  })

  it('keeps parallel calls apart when the server gives them all index 0 (Ollama): a new id with a name starts a new call', async () => {
    fixture.server.handle(
      sse([
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '{"path":' } }] }),
        // A fragment without an id continues the latest call of its index.
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"."}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    )
    const chunks = await collect(fixture.adapter.stream(call()))
    expect(assemble(chunks)).toEqual({
      content: [
        { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
        { type: 'tool-call', id: 'call_b', name: 'list_dir', arguments: '{"path":"."}' },
      ],
      finishReason: { kind: 'tool-calls' },
    })
  })

  it('reads a repeated or changing id without a name as the same call continuing (servers that resend the id with every fragment)', async () => {
    fixture.server.handle(
      sse([
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"pa' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { arguments: 'th":' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'call_other', type: 'function', function: { arguments: '"a"}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    )
    expect(assemble(await collect(fixture.adapter.stream(call())))).toEqual({
      content: [{ type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' }],
      finishReason: { kind: 'tool-calls' },
    })
  })

  it('reads content sent as a list of parts (Mistral\'s Magistral): thinking parts as reasoning, text parts as text', async () => {
    const thinking = (text: string) => chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text }] }] })
    fixture.server.handle(
      sse([
        thinking("It's a greeting"),
        thinking(', I should answer.'),
        chunk({ content: [{ type: 'text', text: 'Hello' }] }),
        chunk({ content: ' there!' }),
        chunk({}, 'stop'),
      ]),
    )
    expect(assemble(await collect(fixture.adapter.stream(call())))).toEqual({
      content: [
        { type: 'reasoning', text: "It's a greeting, I should answer." },
        { type: 'text', text: 'Hello there!' },
      ],
      finishReason: { kind: 'stop' },
    })
  })

  it('takes arguments sent as a JSON object instead of text (llama.cpp, TGI) as that object\'s JSON, not as no arguments', async () => {
    fixture.server.handle(
      sse([
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'list_dir', arguments: { path: 'src', depth: 2 } } }] }),
        chunk({}, 'tool_calls'),
      ]),
    )
    expect(assemble(await collect(fixture.adapter.stream(call())))).toEqual({
      content: [{ type: 'tool-call', id: 'call_a', name: 'list_dir', arguments: '{"path":"src","depth":2}' }],
      finishReason: { kind: 'tool-calls' },
    })
  })

  it('gives reasoning, text and each tool call their own block index in order of first appearance', async () => {
    fixture.server.handle(
      sse([
        chunk({ reasoning_content: 'Need the file.' }),
        chunk({ content: 'Let me look.' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{}' } }] }),
        chunk({ reasoning_content: ' And the dir.' }),
        chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'list_dir', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'Need the file.' },
      { type: 'text-delta', index: 1, text: 'Let me look.' },
      { type: 'tool-call-delta', index: 2, id: 'call_1', name: 'read_file', argumentsDelta: '{}' },
      { type: 'reasoning-delta', index: 0, text: ' And the dir.' },
      { type: 'tool-call-delta', index: 3, id: 'call_2', name: 'list_dir', argumentsDelta: '{}' },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
  })

  it('holds argument fragments that arrive before the function name, and makes up an id when the server sends none', async () => {
    fixture.server.handle(
      sse([
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { name: 'search_files', arguments: '"x"}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    )
    const chunks = await collect(fixture.adapter.stream(call()))
    expect(chunks).toEqual([
      { type: 'tool-call-delta', index: 0, id: expect.stringMatching(/^call_/), name: 'search_files', argumentsDelta: '{"q":"x"}' },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
  })

  it('reports tool-calls when a server ends a call-making answer with finish_reason stop', async () => {
    fixture.server.handle(
      sse([
        chunk({ tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } }] }),
        chunk({}, 'stop'),
      ]),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'call_x', name: 'list_dir', argumentsDelta: '{"path":"."}' },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
  })

  it('maps finish_reason length to max-tokens', async () => {
    fixture.server.handle(sse([chunk({ content: 'The answer is cut' }), chunk({}, 'length')]))
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'The answer is cut' },
      { type: 'finish', reason: { kind: 'max-tokens' } },
    ])
  })

  it('accepts a stream that ends after its finish_reason without [DONE]', async () => {
    fixture.server.handle(sse([chunk({ content: 'ok' }, 'stop')], { done: false }))
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'ok' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
  })

  it('reads events split across network writes and CRLF line endings', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      const text = `data: ${JSON.stringify(chunk({ content: 'split' }))}\r\n\r\ndata: ${JSON.stringify(chunk({}, 'stop'))}\r\n\r\ndata: [DONE]\r\n\r\n`
      for (let i = 0; i < text.length; i += 7) {
        await new Promise<void>((resolve) => res.write(text.slice(i, i + 7), () => resolve()))
      }
      res.end()
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'split' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
  })

  it('keeps multi-byte characters intact when a network write splits them', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      const bytes = Buffer.from(`data: ${JSON.stringify(chunk({ content: '深度求索 ✓' }))}\n\n`)
      const cut = bytes.indexOf(Buffer.from('度')) + 1
      await new Promise<void>((resolve) => res.write(bytes.subarray(0, cut), () => resolve()))
      await new Promise<void>((resolve) => res.write(bytes.subarray(cut), () => resolve()))
      await send(res, chunk({}, 'stop'))
      res.end()
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: '深度求索 ✓' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
  })
})
