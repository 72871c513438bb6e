import { describe, expect, it } from 'vitest'
import { call, deferred, echoTool, fakeAgent, mountTools, resultText } from './helpers'

describe('tools/execute wrappers that fail after the body returned (R-TOOL-1)', () => {
  it('a wrapper that calls next() twice: the body runs once, and the call keeps its result (the side effect happened)', async () => {
    const root = await mountTools()
    const runs: string[] = []
    root.tools.register(
      echoTool('write', (_args, run) => {
        runs.push(`write ${runs.length + 1}`)
        run.deferContext({ label: 'file: a.txt', content: 'a' })
        return `wrote ${runs.length}`
      }),
    )
    root.on('tools/execute', async (_dispatch, next) => {
      // A tracing wrapper written wrong: it awaits next() for its span, then returns next() again.
      await next()
      return next()
    })
    const result = await root.tools.execute(call('write'), { agent: fakeAgent(root, 'a') })
    expect({ runs, error: result.error, text: resultText(result), contexts: result.contexts.length }).toEqual({
      runs: ['write 1'],
      error: undefined,
      text: { text: 'wrote 1', isError: false },
      contexts: 1,
    })
  })

  it('a wrapper that throws after next() resolved: the result is the body\'s; one that throws while the body runs still fails the call', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    const gate = deferred<string>()
    root.tools.register(echoTool('write', () => 'wrote a.txt'))
    root.tools.register(echoTool('slow', () => gate.promise))
    root.on('tools/execute', async (dispatch, next) => {
      if (dispatch.call.name === 'slow') {
        void next()
        throw new Error('tracing backend unreachable')
      }
      await next()
      throw new Error('metrics backend unreachable')
    })
    const written = await root.tools.execute(call('write'), { agent })
    const slow = root.tools.execute(call('slow'), { agent })
    gate.resolve('done')
    expect([resultText(written), (await slow).error]).toEqual([
      { text: 'wrote a.txt', isError: false },
      { code: 'TOOL_ERROR', message: 'tracing backend unreachable' },
    ])
  })
})
