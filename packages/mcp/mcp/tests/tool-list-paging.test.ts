import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { connected, execute, mcpSpine, resultText, stateOf } from './helpers'

const script = fileURLToPath(new URL('./fixtures/paging-server.mjs', import.meta.url))

describe('a tools/list pagination that never ends', () => {
  it('a cursor that repeats ends the listing with the tools listed so far', async () => {
    const kit = await mcpSpine({ servers: { paging: { command: process.execPath, args: [script] } } })
    const status = await connected(kit, 'paging')
    expect(status.tools).toEqual(['ping'])
    const agent = await kit.agent()
    // The server was asked for two pages: the first, and the one its cursor named, which named it again.
    expect(resultText(await execute(kit, agent, 'mcp__paging__ping', {}))).toBe('2')
  })

  it('endless new cursors fail the attempt, saying why, instead of listing forever', async () => {
    const kit = await mcpSpine({ servers: { paging: { command: process.execPath, args: [script], env: { PAGING: 'endless' } } } })
    const failed = await stateOf(kit, 'paging', (status) => status.state === 'restarting' || status.state === 'failed')
    expect(failed.error).toBe('could not connect: its tools/list returned more than 100 pages; the listing was given up')
  })
})
