import { describe, expect, it } from 'vitest'
import { deferred, gatedTool, settle, spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

const calls = (name: string, keys: string[]) => keys.map((key) => ({ name, arguments: { key } }))

describe('tool batches (R-TOOL-3)', () => {
  it('concurrency-safe calls overlap; tool/call, results and contexts stay in model order', async () => {
    const log: string[] = []
    const { tool, release } = gatedTool('read', { safe: true, log })
    const { agent, model } = await spine({ tools: [tool], model: { script: [{ toolCalls: calls('read', ['a', 'b', 'c']), answer: 'done' }] } })
    const a = await agent()
    a.followup('go')
    await settle()
    expect(log).toEqual(['start a', 'start b', 'start c'])
    release('c')
    release('b')
    await settle()
    expect(trace(a.session).filter((l) => l.startsWith('tool/'))).toEqual(['tool/call read', 'tool/call read', 'tool/call read'])
    release('a')
    await a.whenIdle()
    expect(trace(a.session).filter((l) => l.startsWith('tool/') || l.startsWith('user/message "context'))).toEqual([
      'tool/call read',
      'tool/call read',
      'tool/call read',
      'tool/result ok "result a"',
      'tool/result ok "result b"',
      'tool/result ok "result c"',
      'user/message "context of a"',
      'user/message "context of b"',
      'user/message "context of c"',
    ])
    expect(transcript(model.requests[1]!.messages).slice(2)).toEqual([
      'user: result result a',
      'user: result result b',
      'user: result result c',
      'user: context of a',
      'user: context of b',
      'user: context of c',
    ])
  })

  it('calls that need no wait (no listener, bodies that return a value) keep the same order: every tool/call, then every result', async () => {
    const log: string[] = []
    const now = {
      name: 'now',
      description: 'answers at once',
      parameters: { type: 'object', properties: { key: { type: 'string' } } },
      isConcurrencySafe: () => true,
      execute: (args: unknown) => {
        const key = (args as { key: string }).key
        log.push(`body ${key}`)
        return `result ${key}`
      },
    }
    const { agent, model } = await spine({ tools: [now], model: { script: [{ toolCalls: calls('now', ['a', 'b', 'c']), answer: 'done' }] } })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(log).toEqual(['body a', 'body b', 'body c'])
    expect(trace(a.session).filter((l) => l.startsWith('tool/'))).toEqual([
      'tool/call now',
      'tool/call now',
      'tool/call now',
      'tool/result ok "result a"',
      'tool/result ok "result b"',
      'tool/result ok "result c"',
    ])
    expect(transcript(model.requests[1]!.messages).slice(2)).toEqual(['user: result result a', 'user: result result b', 'user: result result c'])
  })

  it('deferred contexts follow every result, in model order, whichever calls deferred them (none, two, one)', async () => {
    const defer: Record<string, string[]> = { a: [], b: ['b1', 'b2'], c: ['c1'] }
    const noting = {
      name: 'noting',
      description: 'defers the contexts its key names',
      parameters: { type: 'object', properties: { key: { type: 'string' } } },
      isConcurrencySafe: () => true,
      execute: (args: unknown, run: { deferContext(context: { label: string; content: string }): void }) => {
        const key = (args as { key: string }).key
        for (const note of defer[key]!) run.deferContext({ label: note, content: `note ${note}` })
        return `result ${key}`
      },
    }
    const { agent, model } = await spine({ tools: [noting], model: { script: [{ toolCalls: calls('noting', ['a', 'b', 'c']), answer: 'done' }] } })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(transcript(model.requests[1]!.messages).slice(2)).toEqual([
      'user: result result a',
      'user: result result b',
      'user: result result c',
      'user: note b1',
      'user: note b2',
      'user: note c1',
    ])
  })

  it('the pool rolls: at most maxParallelToolCalls bodies run, and the next starts as soon as one ends', async () => {
    const log: string[] = []
    const { tool, release } = gatedTool('read', { safe: true, log })
    const { agent } = await spine({ maxParallelToolCalls: 2, tools: [tool], model: { script: [{ toolCalls: calls('read', ['a', 'b', 'c', 'd']), answer: 'done' }] } })
    const a = await agent()
    a.followup('go')
    await settle()
    expect(log).toEqual(['start a', 'start b'])
    release('b')
    await settle()
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c'])
    release('a')
    await settle()
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c', 'end a', 'start d'])
    release('c')
    release('d')
    await a.whenIdle()
  })

  it('an exclusive call is a barrier: it waits for the running calls, and later calls wait for it', async () => {
    const log: string[] = []
    const safe = gatedTool('read', { safe: true, log })
    const exclusive = gatedTool('write', { safe: false, log })
    const { agent } = await spine({
      tools: [safe.tool, exclusive.tool],
      model: { script: [{ toolCalls: [...calls('read', ['r1']), ...calls('write', ['w']), ...calls('read', ['r2'])], answer: 'done' }] },
    })
    const a = await agent()
    a.followup('go')
    await settle()
    expect(log).toEqual(['start r1'])
    safe.release('r1')
    await settle()
    expect(log).toEqual(['start r1', 'end r1', 'start w'])
    exclusive.release('w')
    await settle()
    expect(log).toEqual(['start r1', 'end r1', 'start w', 'end w', 'start r2'])
    safe.release('r2')
    await a.whenIdle()
  })

  it('maxParallelToolCalls 1 runs every call serially', async () => {
    const log: string[] = []
    const { tool, release } = gatedTool('read', { safe: true, log })
    const { agent } = await spine({ maxParallelToolCalls: 1, tools: [tool], model: { script: [{ toolCalls: calls('read', ['a', 'b']), answer: 'done' }] } })
    const a = await agent()
    a.followup('go')
    await settle()
    expect(log).toEqual(['start a'])
    release('a')
    await settle()
    expect(log).toEqual(['start a', 'end a', 'start b'])
    release('b')
    await a.whenIdle()
  })

  it('each call is classified just before it starts, not when the batch begins', async () => {
    const log: string[] = []
    let safeNow = true
    const flip = gatedTool('read', { safe: () => safeNow, log })
    const { agent } = await spine({ maxParallelToolCalls: 2, tools: [flip.tool], model: { script: [{ toolCalls: calls('read', ['a', 'b', 'c']), answer: 'done' }] } })
    const a = await agent()
    a.followup('go')
    await settle()
    expect(log).toEqual(['start a', 'start b'])
    // c waits for room; by the time it gets some, it has become exclusive.
    safeNow = false
    flip.release('a')
    await settle()
    expect(log).toEqual(['start a', 'start b', 'end a'])
    flip.release('b')
    await settle()
    expect(log).toEqual(['start a', 'start b', 'end a', 'end b', 'start c'])
    flip.release('c')
    await a.whenIdle()
  })

  it('unknown tools and invalid arguments still get results, in order, and the turn goes on', async () => {
    const { agent, model } = await spine({
      model: { script: [{ toolCalls: [{ name: 'nope', arguments: {} }, { name: 'also_nope', arguments: '{not json' }], answer: 'recovered' }] },
    })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    const results = trace(a.session).filter((l) => l.startsWith('tool/result'))
    expect(results.map((l) => l.split(' ')[1])).toEqual(['UNKNOWN_TOOL', 'UNKNOWN_TOOL'])
    expect(transcript(model.requests[1]!.messages).at(-1)).toMatch(/^user: result Error: /)
    expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
  })

  it('only the bodies overlap: policy stages, result stages and tools/result follow model order', async () => {
    const log: string[] = []
    const { tool, release } = gatedTool('read', { safe: true, log })
    const { agent, root } = await spine({ tools: [tool], model: { script: [{ toolCalls: calls('read', ['a', 'b']), answer: 'done' }] } })
    const policyA = deferred()
    root.on('tools/pre-execute', async (invocation, next) => {
      const key = (invocation.args as { key: string }).key
      log.push(`pre ${key} start`)
      if (key === 'a') await policyA.promise
      log.push(`pre ${key} end`)
      return next()
    })
    root.on('tools/post-execute', async (invocation, _output, next) => {
      log.push(`post ${(invocation.args as { key: string }).key}`)
      return next()
    })
    root.on('tools/result', (_agent, call) => void log.push(`result ${JSON.parse(call.arguments).key}`))
    const a = await agent()
    a.followup('go')
    await settle()
    expect(log).toEqual(['pre a start'])
    policyA.resolve()
    await settle()
    // a's body starts once its policy passed; b's policy waits for a's, not for a's body.
    expect(log).toEqual(['pre a start', 'pre a end', 'start a', 'pre b start', 'pre b end', 'start b'])
    release('b')
    await settle()
    expect(log.slice(6)).toEqual(['end b'])
    release('a')
    await a.whenIdle()
    expect(log.slice(6)).toEqual(['end b', 'end a', 'post a', 'result a', 'post b', 'result b'])
  })

  it('calls a cancel kept from starting still end on tools/result, as ABORTED_BEFORE_DISPATCH', async () => {
    const log: string[] = []
    const { tool } = gatedTool('write', { safe: false, log })
    const { agent, root, model } = await spine({ tools: [tool], model: { script: [{ toolCalls: calls('write', ['a', 'b']), answer: 'x' }] } })
    const results: string[] = []
    root.on('tools/result', (_agent, _call, result) => void results.push(result.error?.code ?? 'ok'))
    const a = await agent()
    const control = model.control()
    a.followup('go')
    await control.started
    // Stream the two calls, then cancel before the batch starts.
    await control.push(
      { type: 'tool-call-delta', index: 0, id: 'c1' as never, name: 'write', argumentsDelta: '{"key":"a"}' },
      { type: 'tool-call-delta', index: 1, id: 'c2' as never, name: 'write', argumentsDelta: '{"key":"b"}' },
    )
    a.cancel({ kind: 'user' })
    await a.whenIdle()
    expect(log).toEqual([])
    expect(results).toEqual(['ABORTED_BEFORE_DISPATCH', 'ABORTED_BEFORE_DISPATCH'])
  })

  it('a string result is logged as it was built; content blocks JSON cannot carry fail their call (TOOL_ERROR), never the agent', async () => {
    // A text block with a non-JSON field: dsh-tools refuses it as the call's TOOL_ERROR (since 831370c; the log's
    // lossless-JSON check used to refuse it, which failed the agent). Only results dsh-tools built from a string skip the
    // log's check (isTextResult).
    const odd = {
      name: 'odd',
      description: 'answers with a block that carries a Date',
      parameters: { type: 'object', properties: {} },
      isConcurrencySafe: () => true,
      execute: () => [{ type: 'text' as const, text: 'odd', at: new Date(0) }] as never,
    }
    const plain = { ...odd, name: 'plain', description: 'answers with a string', execute: () => 'fine' as never }
    const { agent, root } = await spine({ tools: [plain, odd], model: { script: [{ toolCalls: [{ name: 'plain', arguments: {} }, { name: 'odd', arguments: {} }], answer: 'never' }] } })
    const errors: unknown[] = []
    root.on('agent/error', (_agent, turn, step, error) => void errors.push([turn, step, (error as { code?: string }).code, ((error as { cause?: { code?: string } }).cause)?.code]))
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    const results = a.session.events.filter((event) => event.type === 'tool/result')
    expect(results.slice(0, 1).map((event) => event.data)).toEqual([
      {
        turn: 1,
        step: 1,
        message: {
          id: (results[0]!.data as { message: { id: string } }).message.id,
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: (results[0]!.data as { message: { source: { callId: string } } }).message.source.callId, content: [{ type: 'text', text: 'fine' }] }],
          source: { kind: 'tool', callId: (results[0]!.data as { message: { source: { callId: string } } }).message.source.callId },
        },
      },
    ])
    expect(Object.isFrozen(results[0]!.data)).toBe(true)
    expect(results.map((event) => event.data.error?.code)).toEqual([undefined, 'TOOL_ERROR'])
    // The entries' data are plain objects with the documented keys in order (what a reader, a backend or a replica sees).
    const calls = a.session.events.filter((event) => event.type === 'tool/call')
    expect([...calls, ...results].map((event) => [Object.getPrototypeOf(event.data) === Object.prototype, Object.keys(event.data)])).toEqual([
      [true, ['turn', 'step', 'callId', 'name', 'arguments']],
      [true, ['turn', 'step', 'callId', 'name', 'arguments']],
      [true, ['turn', 'step', 'message']],
      [true, ['turn', 'step', 'message', 'error']],
    ])
    expect(errors).toEqual([])
    expect(trace(a.session).filter((l) => l.startsWith('tool/') || l.startsWith('turn/end'))).toEqual([
      'tool/call plain',
      'tool/call odd',
      'tool/result ok "fine"',
      'tool/result TOOL_ERROR "Error: malformed tool output: the tool output[0].at is a Date instance, not a plain object (convert it to plain JSON first)"',
      'turn/end 1 completed',
    ])
  })

})
