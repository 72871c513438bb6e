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
})
