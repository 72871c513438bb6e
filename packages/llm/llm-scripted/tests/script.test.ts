import { describe, expect, it } from 'vitest'
import { assemble, CallId, createUserMessage, LlmError, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { ScriptError, ScriptedModel, type ScriptTurn } from '@deepseek-ai/dsh-llm-scripted'
import { collect, drain, mounted, options, stop } from './helpers'

const noUsage = { usage: false } as const

describe('streaming a scripted reply', () => {
  it('streams a text answer one word per delta, then an estimated usage and stop', async () => {
    const model = new ScriptedModel({ script: ['Hello there, world! '] })
    const messages = [createUserMessage('12345678')]
    expect(await collect(model.stream(options(messages, { system: 'abcd' })))).toEqual([
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'text-delta', index: 0, text: ' there,' },
      { type: 'text-delta', index: 0, text: ' world!' },
      { type: 'text-delta', index: 0, text: ' ' },
      // input: 8 + 4 characters → 3 tokens; output: 20 characters → 5 tokens
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 5 } },
      stop,
    ])
  })

  it('cuts text into fixed-size deltas when textChunking is a number', async () => {
    const model = new ScriptedModel({ script: [{ text: 'abcdefg', ...noUsage }], textChunking: 3 })
    expect(await collect(model.stream(options()))).toEqual([
      { type: 'text-delta', index: 0, text: 'abc' },
      { type: 'text-delta', index: 0, text: 'def' },
      { type: 'text-delta', index: 0, text: 'g' },
      stop,
    ])
  })

  it('streams reasoning first with its signature on the last delta, exact deltas when given as an array', async () => {
    const model = new ScriptedModel({ script: [{ reasoning: ['think', 'ing'], signature: 'sig', text: ['a', 'b'], ...noUsage }] })
    expect(await collect(model.stream(options()))).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'think' },
      { type: 'reasoning-delta', index: 0, text: 'ing', signature: 'sig' },
      { type: 'text-delta', index: 1, text: 'a' },
      { type: 'text-delta', index: 1, text: 'b' },
      stop,
    ])
  })

  it('streams tool calls as id+name first, then argument fragments, and finishes with tool-calls', async () => {
    const model = new ScriptedModel({
      script: [{ text: 'Looking.', toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }, { id: 'mine', name: 'list_dir', arguments: '{"path":"."}' }], ...noUsage }],
      argumentChunkSize: 8,
    })
    const chunks = await collect(model.stream(options()))
    expect(chunks).toEqual([
      { type: 'text-delta', index: 0, text: 'Looking.' },
      { type: 'tool-call-delta', index: 1, id: 'call_0_0', name: 'read_file', argumentsDelta: '{"path":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '"README.' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'md"}' },
      { type: 'tool-call-delta', index: 2, id: 'mine', name: 'list_dir', argumentsDelta: '{"path":' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '"."}' },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
    expect(assemble(chunks).content).toEqual([
      { type: 'text', text: 'Looking.' },
      { type: 'tool-call', id: CallId('call_0_0'), name: 'read_file', arguments: '{"path":"README.md"}' },
      { type: 'tool-call', id: CallId('mine'), name: 'list_dir', arguments: '{"path":"."}' },
    ])
  })

  it('a tool call without arguments streams {} and the estimate counts reasoning apart from output', async () => {
    const model = new ScriptedModel({ script: [{ reasoning: 'abcdefgh', toolCalls: [{ name: 'now' }] }] })
    expect(await collect(model.stream(options([])))).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'abcdefgh' },
      { type: 'tool-call-delta', index: 1, id: 'call_0_0', name: 'now', argumentsDelta: '{}' },
      { type: 'usage', usage: { inputTokens: 0, outputTokens: 2, reasoningTokens: 2 } },
      { type: 'finish', reason: { kind: 'tool-calls' } },
    ])
  })

  it('unfolds a tool round into one call per reply, in order, with call-indexed ids', async () => {
    const script: ScriptTurn[] = [
      { toolCalls: [{ name: 'a' }], answer: { toolCalls: [{ name: 'b' }], answer: 'done' } },
      'next turn',
    ]
    const model = new ScriptedModel({ script, usage: false })
    const replies = []
    for (let i = 0; i < 4; i++) replies.push(assemble(await collect(model.stream(options()))))
    expect(replies.map((r) => [r.content, r.finishReason.kind])).toEqual([
      [[{ type: 'tool-call', id: 'call_0_0', name: 'a', arguments: '{}' }], 'tool-calls'],
      [[{ type: 'tool-call', id: 'call_1_0', name: 'b', arguments: '{}' }], 'tool-calls'],
      [[{ type: 'text', text: 'done' }], 'stop'],
      [[{ type: 'text', text: 'next turn' }], 'stop'],
    ])
    expect(model.remaining).toBe(0)
  })

  it('honours a scripted finish, usage and error finish', async () => {
    const failure = { code: 'RATE_LIMIT' as const, message: 'slow down', retryAfterMs: 100 }
    const usage = { inputTokens: 1, outputTokens: 2 }
    const model = new ScriptedModel({ script: [{ text: 'cut', finish: 'max-tokens', usage }, { error: failure, usage: false }] })
    expect(await collect(model.stream(options()))).toEqual([
      { type: 'text-delta', index: 0, text: 'cut' },
      { type: 'usage', usage },
      { type: 'finish', reason: { kind: 'max-tokens' } },
    ])
    expect(await collect(model.stream(options()))).toEqual([{ type: 'finish', reason: { kind: 'error', failure } }])
  })

  it('throws mid-stream after the content, like a broken connection', async () => {
    const model = new ScriptedModel({ script: [{ text: 'half', throw: { code: 'TRANSPORT', message: 'reset' } }, { throw: 'plain' }] })
    const first = await drain(model.stream(options()))
    expect(first.chunks).toEqual([{ type: 'text-delta', index: 0, text: 'half' }])
    expect(first.error).toBeInstanceOf(LlmError)
    expect((first.error as LlmError).failure).toEqual({ code: 'TRANSPORT', message: 'reset' })
    const second = await drain(model.stream(options()))
    expect({ chunks: second.chunks, message: (second.error as Error).message }).toEqual({ chunks: [], message: 'plain' })
  })

  it('ends without finish when told to, and ctx.llm turns that into TRANSPORT', async () => {
    const model = new ScriptedModel({ script: [{ text: 'x', noFinish: true, usage: false }] })
    const root = await mounted(model)
    expect(await collect(root.llm.stream(options()))).toEqual([
      { type: 'text-delta', index: 0, text: 'x' },
      { type: 'finish', reason: { kind: 'error', failure: { code: 'TRANSPORT', message: 'the model stream for scripted/demo ended after 1 chunk(s) without a finish chunk; the connection was probably cut' } } },
    ])
  })

  it('streams verbatim chunks, then throws if told to', async () => {
    const chunks: StreamChunk[] = [stop, { type: 'text-delta', index: 0, text: 'after finish' }]
    const model = new ScriptedModel({ script: [{ chunks }, { chunks: [], throw: 'before anything' }] })
    expect(await collect(model.stream(options()))).toEqual(chunks)
    const root = await mounted(model)
    expect(await collect(root.llm.stream(options()))).toEqual([
      { type: 'finish', reason: { kind: 'error', failure: { code: 'UNKNOWN', message: 'before anything' } } },
    ])
  })

  it('gives a clear error finish once the script is exhausted', async () => {
    const model = new ScriptedModel({ script: ['only'] })
    await collect(model.stream(options()))
    expect(await collect(model.stream(options()))).toEqual([
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'BAD_REQUEST',
            message: 'the scripted model has no reply for call #1: its script had 1 replies and no responder is set; add turns (script, enqueue()) or set respond',
          },
        },
      },
    ])
    model.enqueue('more')
    expect(assemble(await collect(model.stream(options()))).content).toEqual([{ type: 'text', text: 'more' }])
  })

  it('an abort between chunks ends the stream with the abort, like a real provider', async () => {
    const controller = new AbortController()
    const model = new ScriptedModel({ script: ['one two three'] })
    const seen: StreamChunk[] = []
    const root = await mounted(model)
    for await (const chunk of root.llm.stream(options(undefined, { signal: controller.signal }))) {
      seen.push(chunk)
      controller.abort()
    }
    expect(seen).toEqual([{ type: 'text-delta', index: 0, text: 'one' }, { type: 'finish', reason: { kind: 'aborted' } }])
  })

  it('with chunkDelayMs, an abort during the delay ends the stream', async () => {
    const controller = new AbortController()
    const model = new ScriptedModel({ script: ['one two'], chunkDelayMs: 1 })
    const root = await mounted(model)
    const seen: StreamChunk[] = []
    for await (const chunk of root.llm.stream(options(undefined, { signal: controller.signal }))) {
      seen.push(chunk)
      if (seen.length === 1) queueMicrotask(() => controller.abort())
    }
    expect(seen).toEqual([{ type: 'text-delta', index: 0, text: 'one' }, { type: 'finish', reason: { kind: 'aborted' } }])
  })
})

describe('bad scripts are refused with INVALID_SCRIPT', () => {
  const cases: Array<[unknown, string]> = [
    ['nope', 'the script must be an array of turns'],
    [[42], 'script[0] must be a string or a reply object'],
    [[{ txt: 'typo' }], 'script[0] has an unknown field "txt"'],
    [[{ text: 1 }], 'script[0].text must be a string or an array of strings'],
    [[{ reasoning: [1] }], 'script[0].reasoning must be a string or an array of strings'],
    [[{ toolCalls: {} }], 'script[0].toolCalls must be an array'],
    [[{ toolCalls: [{ name: '' }] }], 'script[0].toolCalls[0].name must be a non-empty string'],
    [[{ toolCalls: [{ name: 'a', arguments: 3 }] }], 'script[0].toolCalls[0].arguments must be an object or a JSON string'],
    [[{ toolCalls: [{ name: 'a', id: '' }] }], 'script[0].toolCalls[0].id must be a non-empty string when set'],
    [[{ finish: 'done' }], 'script[0].finish must be one of stop, tool-calls, max-tokens'],
    [[{ error: { message: 'x' } }], 'script[0].error must be an LlmFailure { code, message }'],
    [[{ usage: { inputTokens: 1 } }], 'script[0].usage must be false or { inputTokens, outputTokens, … }'],
    [[{ error: { code: 'AUTH', message: 'x' }, throw: 'y' }], 'script[0] sets error and throw: a reply ends one way'],
    [[{ finish: 'stop', noFinish: true }], 'script[0] sets finish and noFinish: a reply ends one way'],
    [[{ error: { code: 'AUTH', message: 'x' }, throw: 'y', noFinish: true }], 'script[0] sets error and throw and noFinish: a reply ends one way'],
    [[{ toolCalls: [{ name: 'a' }, 'b'] }], 'script[0].toolCalls[1] must be an object with a name'],
    [[{ chunks: [stop], text: 'x' }], 'script[0] sets chunks with text: verbatim chunks combine only with throw'],
    [[{ chunks: [1] }], 'script[0].chunks must be an array of stream chunks'],
    [['ok', { toolCalls: [{ name: 'a' }], answer: { text: 2 } }], 'script[1].answer.text must be a string or an array of strings'],
  ]
  for (const [script, message] of cases) {
    it(message, () => {
      let error: unknown
      try {
        new ScriptedModel({ script: script as ScriptTurn[] })
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(ScriptError)
      expect({ code: (error as ScriptError).code, message: (error as ScriptError).message }).toEqual({ code: 'INVALID_SCRIPT', message })
    })
  }

  it('takes noFinish: false as no ending: it combines with finish', () => {
    expect(new ScriptedModel({ script: [{ text: 'x', finish: 'max-tokens', noFinish: false }] }).remaining).toBe(1)
  })

  it('enqueue refuses a bad turn and appends nothing', () => {
    const model = new ScriptedModel()
    expect(() => model.enqueue('fine', { text: 3 } as never)).toThrow(ScriptError)
    expect(model.remaining).toBe(0)
  })

  it('refuses bad options', () => {
    const bad = [{ chunkDelayMs: -1 }, { textChunking: 0 }, { textChunking: 'line' }, { argumentChunkSize: 0 }, { models: [{}] }, { respond: 'x' }]
    for (const option of bad) expect(() => new ScriptedModel(option as never)).toThrow(ScriptError)
  })
})
