import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { call, fakeAgent, mountTools, resultText } from './helpers'

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a text file of the workspace.',
  parameters: z.object({
    path: z.string().describe('Path relative to the workspace root'),
    offset: z.number().int().min(0).optional(),
    encoding: z.enum(['utf8', 'latin1']).default('utf8'),
  }),
  execute: (args) => JSON.stringify(args),
  isConcurrencySafe: () => true,
})

describe('defineTool', () => {
  it('generates the JSON Schema of the input, without $schema or the ±2^53 integer bounds', () => {
    expect(readFile.parameters).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path relative to the workspace root' },
        offset: { type: 'integer', minimum: 0 },
        encoding: { default: 'utf8', type: 'string', enum: ['utf8', 'latin1'] },
      },
      required: ['path'],
      additionalProperties: false,
    })
  })

  it('is deterministic: the same schema gives the same bytes', () => {
    const again = defineTool({ ...readFile, parameters: z.object({
      path: z.string().describe('Path relative to the workspace root'),
      offset: z.number().int().min(0).optional(),
      encoding: z.enum(['utf8', 'latin1']).default('utf8'),
    }) })
    expect(JSON.stringify(again.parameters)).toBe(JSON.stringify(readFile.parameters))
  })

  it('validates before the body and hands it the parsed arguments (defaults applied)', async () => {
    const root = await mountTools()
    root.tools.register(readFile)
    const result = await root.tools.execute(call('read_file', { path: 'a.ts' }), { agent: fakeAgent(root, 'a') })
    expect(resultText(result)).toEqual({ text: '{"path":"a.ts","encoding":"utf8"}', isError: false })
  })

  it("turns zod's issues into the INVALID_ARGUMENTS text, path first", async () => {
    const root = await mountTools()
    root.tools.register(readFile)
    const agent = fakeAgent(root, 'a')
    const wrongType = await root.tools.execute(call('read_file', { path: 3, offset: -1 }), { agent })
    expect(wrongType.error).toEqual({
      code: 'INVALID_ARGUMENTS',
      message:
        'invalid arguments for read_file: path: Invalid input: expected string, received number; offset: Too small: expected number to be >=0',
    })
    const unknownKey = await root.tools.execute(call('read_file', { path: 'a', lenght: 3 }), { agent })
    expect(unknownKey.error?.message).toBe('invalid arguments for read_file: Unrecognized key: "lenght"')
  })

  it('a z.looseObject schema accepts unknown keys', async () => {
    const tool = defineTool({
      name: 'loose',
      description: 'x',
      parameters: z.looseObject({ a: z.string() }),
      execute: (args) => JSON.stringify(args),
    })
    expect(tool.parameters).toEqual({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: {} })
    const root = await mountTools()
    root.tools.register(tool)
    const result = await root.tools.execute(call('loose', { a: 'x', b: 1 }), { agent: fakeAgent(root, 'a') })
    expect(resultText(result).text).toBe('{"a":"x","b":1}')
  })

  it('keeps the optional fields it was given', () => {
    expect(readFile.isConcurrencySafe?.({ path: 'x', encoding: 'utf8' })).toBe(true)
    expect(readFile.timeoutMs).toBeUndefined()
    expect(Object.keys(readFile).sort()).toEqual(['description', 'execute', 'isConcurrencySafe', 'name', 'parameters', 'validate'])
  })

  it('refuses a parameters value that is not a zod object, and a schema with no JSON form', () => {
    expect(() =>
      defineTool({ name: 'x', description: 'x', parameters: z.string() as never, execute: () => '' }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_DEFINITION' }))
    expect(() =>
      defineTool({ name: 'x', description: 'x', parameters: z.object({ when: z.date() }), execute: () => '' }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_DEFINITION', message: expect.stringContaining('no JSON Schema form') }))
  })
})

describe('plain JSON Schema definitions', () => {
  it('are sent as they are, and their arguments still must be a JSON object', async () => {
    const root = await mountTools()
    const parameters = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }
    root.tools.register({ name: 'search', description: 'Search.', parameters, execute: (args) => JSON.stringify(args) })
    expect(root.tools.schemas()[0]!.parameters).toEqual(parameters)
    const agent = fakeAgent(root, 'a')
    // No validator: what the model sent is what the body gets.
    expect(resultText(await root.tools.execute(call('search', { q: 1 }), { agent })).text).toBe('{"q":1}')
    expect((await root.tools.execute(call('search', '[]'), { agent })).error?.code).toBe('INVALID_ARGUMENTS')
  })
})
