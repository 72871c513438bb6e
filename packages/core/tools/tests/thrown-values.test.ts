import { describe, expect, it } from 'vitest'
import { call, echoTool, fakeAgent, mountTools } from './helpers'

/** A tool (or its validator) may throw any value: the model still reads what it said, under the right code. */
describe('thrown values that are not Errors (R-TOOL-2)', () => {
  it('a body that throws an error object of another library, or an Error whose message is not text: TOOL_ERROR with what can be read', async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    const odd = new Error('x')
    ;(odd as { message: unknown }).message = { text: 'not a string' }
    const bodies: Record<string, () => never> = {
      rpc: () => {
        throw { code: -32603, message: 'the server failed: index locked' }
      },
      odd: () => {
        throw odd
      },
      blank: () => {
        throw { message: '   ' }
      },
    }
    for (const [name, body] of Object.entries(bodies)) root.tools.register(echoTool(name, body))
    const errors = []
    for (const name of Object.keys(bodies)) errors.push((await root.tools.execute(call(name), { agent })).error)
    expect(errors).toEqual([
      { code: 'TOOL_ERROR', message: 'the server failed: index locked' },
      { code: 'TOOL_ERROR', message: 'tool failed' },
      { code: 'TOOL_ERROR', message: 'tool failed' },
    ])
  })

  it("a validator that throws a string or an error object: INVALID_ARGUMENTS with the validator's words", async () => {
    const root = await mountTools()
    const agent = fakeAgent(root, 'a')
    root.tools.register(
      echoTool('text', () => 'ok', {
        validate: () => {
          throw 'path must be relative'
        },
      }),
    )
    root.tools.register(
      echoTool('object', () => 'ok', {
        validate: () => {
          throw { message: 'limit must be at most 200' }
        },
      }),
    )
    expect([(await root.tools.execute(call('text'), { agent })).error, (await root.tools.execute(call('object'), { agent })).error]).toEqual([
      { code: 'INVALID_ARGUMENTS', message: 'invalid arguments for text: path must be relative' },
      { code: 'INVALID_ARGUMENTS', message: 'invalid arguments for object: limit must be at most 200' },
    ])
  })
})
