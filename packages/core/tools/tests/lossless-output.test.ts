import { describe, expect, it } from 'vitest'
import { call, echoTool, fakeAgent, mountTools } from './helpers'

/**
 * A result goes into the session log, which refuses what JSON cannot carry
 * back unchanged, and a refused append stops the agent for good. So a tool's
 * output (or deferred context) that JSON cannot carry must fail that call
 * alone, as a result the model reads, and the turn goes on.
 */
describe('outputs JSON cannot carry (R-TOOL-2)', () => {
  const cyclic: Record<string, unknown> = { type: 'text', text: 'x' }
  cyclic.self = cyclic
  const cases: [string, unknown, string][] = [
    ['a bigint', [{ type: 'text', text: 'x', size: 10n }], 'the tool output[0].size is a bigint, which JSON cannot represent (use a number or a string)'],
    ['an undefined field', [{ type: 'text', text: 'x', note: undefined }], 'the tool output[0].note is undefined, which JSON drops (omit the key, or use null)'],
    ['a cycle', [cyclic], 'the tool output[0].self refers back to an object that contains it (a cycle)'],
    ['a Date', [{ type: 'json', value: { at: new Date(0) } }], 'the tool output[0].value.at is a Date instance, not a plain object (convert it to plain JSON first)'],
    ['NaN', [{ type: 'json', value: [1, Number.NaN] }], 'the tool output[0].value[1] is NaN, which JSON cannot represent (use a finite number or null)'],
    ['a function', [{ type: 'text', text: 'x', render: () => 'x' }], 'the tool output[0].render is a function, which JSON drops'],
  ]

  it.each(cases)('a body output with %s is a TOOL_ERROR naming where, and the result is plain JSON', async (_name, output, where) => {
    const root = await mountTools()
    root.tools.register(echoTool('odd', () => output as never))
    const result = await root.tools.execute(call('odd'), { agent: fakeAgent(root, 'a') })
    expect(result.error).toEqual({ code: 'TOOL_ERROR', message: `malformed tool output: ${where}` })
    expect(JSON.parse(JSON.stringify(result.message))).toEqual(result.message)
  })

  it('so is a finalizeContent result or a tools/post-execute replacement that JSON cannot carry', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    root.tools.register(echoTool('formatted', () => 'ok', { finalizeContent: () => [{ type: 'text', text: 'x', size: 1n }] as never }))
    root.tools.register(echoTool('replaced', () => 'ok'))
    root.on('tools/post-execute', async (invocation, _output, next) =>
      invocation.call.name === 'replaced' ? { kind: 'replace', output: [{ type: 'text', text: 'x', size: 1n }] as never } : next(),
    )
    expect((await root.tools.execute(call('formatted'), { agent })).error).toEqual({
      code: 'TOOL_ERROR',
      message: 'malformed tool output: finalizeContent()[0].size is a bigint, which JSON cannot represent (use a number or a string)',
    })
    expect((await root.tools.execute(call('replaced'), { agent })).error).toEqual({
      code: 'TOOL_ERROR',
      message: 'malformed tool output: the replacement output[0].size is a bigint, which JSON cannot represent (use a number or a string)',
    })
  })

  it('a deferred context JSON cannot carry throws INVALID_CONTEXT in the body, and the call keeps its other contexts', async () => {
    const root = await mountTools()
    const thrown: unknown[] = []
    root.tools.register(
      echoTool('open', (_args, run) => {
        try {
          run.deferContext({ label: 'odd', content: [{ type: 'text', text: 'x', size: 1n }] as never })
        } catch (error) {
          thrown.push({ code: (error as { code?: unknown }).code, message: (error as Error).message })
        }
        run.deferContext({ label: 'file: a.ts', content: 'a' })
        return 'ok'
      }),
    )
    const result = await root.tools.execute(call('open'), { agent: fakeAgent(root, 'a') })
    expect(thrown).toEqual([{ code: 'INVALID_CONTEXT', message: 'deferContext(): context.content[0].size is a bigint, which JSON cannot represent (use a number or a string)' }])
    expect({ error: result.error, contexts: result.contexts }).toEqual({ error: undefined, contexts: [{ label: 'file: a.ts', content: [{ type: 'text', text: 'a' }] }] })
  })
})
