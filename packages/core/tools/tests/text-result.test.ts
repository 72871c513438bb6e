import { describe, expect, it } from 'vitest'
import { isTextResult, type ToolCallResult, type ToolCallStage } from '@deepseek-ai/dsh-tools'
import { call, echoTool, fakeAgent, mountTools } from './helpers'

/** Stages `name` with `args`, runs it to its end, and returns the stage and its result. */
async function runStaged(root: Awaited<ReturnType<typeof mountTools>>, name: string, args: unknown = {}, id = 'call_1') {
  const agent = fakeAgent(root, 'a')
  const stage = root.tools.stage(call(name, args, id), { agent })
  await stage.admit()
  await stage.run()
  const result = await stage.finish()
  return { stage, result }
}

describe('isTextResult: the results a driver may log without walking them again', () => {
  it('a string output becomes a result built from text: the one text block, deep-frozen, for this stage only', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('say', () => 'ok'))
    const { stage, result } = await runStaged(root, 'say')
    const other = await runStaged(root, 'say')
    expect(isTextResult(stage, result)).toBe(true)
    expect(result.message).toEqual({
      id: result.message.id,
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: 'ok' }] }],
      source: { kind: 'tool', callId: 'call_1' },
    })
    const block = result.message.content[0] as { content: readonly object[] }
    expect([result.message, result.message.content, block, block.content, block.content[0], result.message.source].every(Object.isFrozen)).toBe(true)
    // Another stage's result, a copy of the result, or nothing: not vouched for by this stage.
    expect(isTextResult(stage, other.result)).toBe(false)
    expect(isTextResult(stage, { ...result })).toBe(false)
    expect(isTextResult(stage, undefined)).toBe(false)
  })

  it('a string that a tools/post-execute listener put in place of the output is text too', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('blocks', () => [{ type: 'text', text: 'raw' }]))
    root.on('tools/post-execute', async () => ({ kind: 'replace', output: 'edited' }))
    const { stage, result } = await runStaged(root, 'blocks')
    expect((result.message.content[0] as { content: unknown }).content).toEqual([{ type: 'text', text: 'edited' }])
    expect(isTextResult(stage, result)).toBe(true)
  })

  it('content blocks, finalizeContent, an error result or a call id that is not a non-empty string are not', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('blocks', () => [{ type: 'text', text: 'a' }]))
    root.tools.register(echoTool('formatted', () => 'x', { finalizeContent: (output) => [{ type: 'text', text: `${String(output)}!` }] }))
    root.tools.register(echoTool('broken', () => {
      throw new Error('no')
    }))
    root.tools.register(echoTool('say', () => 'ok'))
    const cases = [await runStaged(root, 'blocks'), await runStaged(root, 'formatted'), await runStaged(root, 'broken'), await runStaged(root, 'missing'), await runStaged(root, 'say', {}, '')]
    expect(cases.map(({ stage, result }) => isTextResult(stage, result))).toEqual([false, false, false, false, false])
    expect(cases.map(({ result }) => result.error?.code)).toEqual([undefined, undefined, 'TOOL_ERROR', 'UNKNOWN_TOOL', undefined])
    // Every result is a plain frozen object with its keys in this order.
    expect(cases.map(({ result }) => [Object.getPrototypeOf(result) === Object.prototype, Object.isFrozen(result), Object.keys(result)])).toEqual([
      [true, true, ['message', 'contexts']],
      [true, true, ['message', 'contexts']],
      [true, true, ['message', 'error', 'contexts']],
      [true, true, ['message', 'error', 'contexts']],
      [true, true, ['message', 'contexts']],
    ])
  })

  it('a stage or result of another implementation is never vouched for', async () => {
    const root = await mountTools()
    root.tools.register(echoTool('say', () => 'ok'))
    const { stage, result } = await runStaged(root, 'say')
    const lookalike: ToolCallStage = { isConcurrencySafe: () => true, admit: () => undefined, run: () => undefined, finish: () => result }
    expect(isTextResult(lookalike, result)).toBe(false)
    expect(isTextResult(Object.create(Object.getPrototypeOf(stage) as object), undefined as unknown as ToolCallResult)).toBe(false)
    expect(isTextResult(undefined, result)).toBe(false)
  })
})
