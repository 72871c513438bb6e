import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { connected, execute, mcpSpine, resultText } from './helpers'

const server = { command: process.execPath, args: [fileURLToPath(new URL('./fixtures/loose-schema-server.mjs', import.meta.url))] }

describe('input schemas every provider accepts', () => {
  it('an array parameter without items gets `items: {}` (OpenAI refuses the whole request otherwise), and nothing else changes', async () => {
    const kit = await mcpSpine({ servers: { loose: server } })
    await connected(kit, 'loose')
    const agent = await kit.agent()
    const schema = kit.root.tools.schemas(agent).find((entry) => entry.name === 'mcp__loose__tag')
    expect(schema?.parameters).toEqual({
      type: 'object',
      properties: {
        ids: { type: 'array', description: 'The ids.', items: {} },
        groups: { type: 'array', items: { type: 'array', items: {} } },
        either: { anyOf: [{ type: 'array', items: {} }, { type: 'string' }] },
        nullable: { type: ['array', 'null'], items: {} },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] },
        names: { type: 'array', items: { type: 'string' } },
        // A value, not a schema: left as the server wrote it.
        shape: { type: 'object', default: { type: 'array' } },
      },
      required: ['ids'],
    })
    // The call goes to the server as the model wrote it.
    expect(resultText(await execute(kit, agent, 'mcp__loose__tag', { ids: [1, 'a'] }))).toBe('{"ids":[1,"a"]}')
  })

  it('oneOf, anyOf and allOf at the top level (Anthropic refuses the whole request) become one object of every property', async () => {
    const kit = await mcpSpine({ servers: { loose: server } })
    await connected(kit, 'loose')
    const agent = await kit.agent()
    const parameters = (name: string) => kit.root.tools.schemas(agent).find((entry) => entry.name === name)?.parameters
    // Required is what every alternative requires (allOf: what any part requires); the server still checks the rest.
    expect(parameters('mcp__loose__pick')).toEqual({ type: 'object', properties: { path: { type: 'string' }, id: { type: 'number' }, verbose: { type: 'boolean' } } })
    expect(parameters('mcp__loose__attach')).toEqual({
      type: 'object',
      properties: { page: { type: 'string' }, content: { type: 'string' }, url: { type: 'string' } },
      required: ['page'],
    })
    expect(parameters('mcp__loose__merge')).toEqual({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } }, required: ['a', 'b'] })
    expect(JSON.parse(resultText(await execute(kit, agent, 'mcp__loose__pick', { id: 3 })))).toEqual({ id: 3 })
  })

  it('text cut inside a character by the server (a lone surrogate: strict provider JSON parsers refuse it) is made well-formed', async () => {
    const kit = await mcpSpine({ servers: { loose: server } })
    await connected(kit, 'loose')
    const agent = await kit.agent()
    const schema = kit.root.tools.schemas(agent).find((entry) => entry.name === 'mcp__loose__cut')
    expect(schema).toMatchObject({ description: 'Cuts text \uFFFD', parameters: { properties: { text: { description: 'The text \uFFFD' } } } })
    expect(resultText(await execute(kit, agent, 'mcp__loose__cut', {}))).toBe('😀😀\uFFFD\n\uFFFDend')
  })
})
