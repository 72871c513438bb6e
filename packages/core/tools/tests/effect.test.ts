import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { TOOL_EFFECTS, defineTool, effectOf, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { echoTool, mountTools } from './helpers'

describe('tool effects', () => {
  it('a declared effect is the effect; an undeclared one counts as execute', () => {
    expect(TOOL_EFFECTS.map((effect) => effectOf({ effect }))).toEqual(['read', 'write', 'network', 'execute'])
    expect(effectOf(echoTool('plain'))).toBe('execute')
    // A definition typed loosely (plain JSON from elsewhere) with a value that is not an effect is not trusted either.
    expect(effectOf({ effect: 'harmless' } as unknown as ToolDefinition)).toBe('execute')
  })

  it('defineTool keeps the effect, and the registry hands it back with the definition', async () => {
    const read = defineTool({ name: 'look', description: 'Looks.', parameters: z.object({}), effect: 'read', execute: () => 'seen' })
    expect(read.effect).toBe('read')
    const root = await mountTools()
    root.tools.register(read)
    root.tools.register(echoTool('run'))
    expect([effectOf(root.tools.definition('look')!), effectOf(root.tools.definition('run')!)]).toEqual(['read', 'execute'])
  })

  it('the effect is not part of what the model sees', async () => {
    const root = await mountTools()
    root.tools.register({ ...echoTool('look'), effect: 'read' })
    expect(Object.keys(root.tools.schemas()[0]!)).toEqual(['name', 'description', 'parameters'])
  })

  it('register refuses an effect that is not one of the four, and a timeout no timer can hold', async () => {
    const root = await mountTools()
    expect(() => root.tools.register({ ...echoTool('x'), effect: 'delete' } as never)).toThrow(
      expect.objectContaining({
        code: 'INVALID_DEFINITION',
        message: 'tool "x": effect must be one of read, write, network, execute (or left out, which counts as execute)',
      }),
    )
    for (const timeoutMs of [2 ** 31, -1, Number.POSITIVE_INFINITY, Number.NaN, '5000']) {
      expect(() => root.tools.register({ ...echoTool('x'), timeoutMs } as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_DEFINITION', message: 'tool "x": timeoutMs must be a number of milliseconds from 0 (no deadline) to 2147483647' }),
      )
    }
    expect(root.tools.schemas()).toEqual([])
  })
})
