import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { trace } from '@deepseek-ai/dsh-testkit'
import { effectOf } from '@deepseek-ai/dsh-tools'
import { connected, everything, execute, filesystem, mcpSpine, resultText, tempDir } from './helpers'

const EVERYTHING_TOOLS = [
  'mcp__everything__echo',
  'mcp__everything__get-annotated-message',
  'mcp__everything__get-env',
  'mcp__everything__get-resource-links',
  'mcp__everything__get-resource-reference',
  'mcp__everything__get-structured-content',
  'mcp__everything__get-sum',
  'mcp__everything__get-tiny-image',
  'mcp__everything__gzip-file-as-resource',
  'mcp__everything__toggle-simulated-logging',
  'mcp__everything__toggle-subscriber-updates',
  'mcp__everything__trigger-long-running-operation',
]

describe('servers from mcpServers config become dsh tools (R-MCP-1)', () => {
  it('lists the tools of real stdio servers as mcp__<server>__<tool>, sorted, with their schemas and effects', async () => {
    const root = tempDir()
    const kit = await mcpSpine({ servers: { everything: everything(), files: filesystem(root) } })
    await Promise.all([connected(kit, 'everything'), connected(kit, 'files')])
    const agent = await kit.agent()

    const names = kit.root.tools.schemas(agent).map((schema) => schema.name)
    expect(names).toEqual(
      [
        ...EVERYTHING_TOOLS,
        'mcp__files__create_directory',
        'mcp__files__directory_tree',
        'mcp__files__edit_file',
        'mcp__files__get_file_info',
        'mcp__files__list_allowed_directories',
        'mcp__files__list_directory',
        'mcp__files__list_directory_with_sizes',
        'mcp__files__move_file',
        'mcp__files__read_file',
        'mcp__files__read_media_file',
        'mcp__files__read_multiple_files',
        'mcp__files__read_text_file',
        'mcp__files__search_files',
        'mcp__files__write_file',
      ].sort(),
    )
    expect(kit.mcp.toolNames(agent)).toEqual(names)
    // The model sees the server's description and input schema (without `$schema`).
    expect(kit.root.tools.schemas(agent).find((schema) => schema.name === 'mcp__everything__echo')).toEqual({
      name: 'mcp__everything__echo',
      description: 'Echoes back the input string',
      parameters: { type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] },
    })
    // readOnlyHint → read (and overlapping calls); anything else → execute.
    const effect = (name: string) => effectOf(kit.root.tools.definition(name, agent)!)
    expect(['mcp__files__read_text_file', 'mcp__files__write_file', 'mcp__everything__echo', 'mcp__everything__toggle-simulated-logging'].map(effect)).toEqual([
      'read',
      'execute',
      'read',
      'execute',
    ])
    expect(kit.root.tools.isConcurrencySafe({ name: 'mcp__files__read_text_file', arguments: '{}' }, agent)).toBe(true)
    expect(kit.root.tools.isConcurrencySafe({ name: 'mcp__files__write_file', arguments: '{}' }, agent)).toBe(false)

    writeFileSync(join(root, 'notes.txt'), 'first line\nsecond line\n')
    const read = await execute(kit, agent, 'mcp__files__read_text_file', { path: join(root, 'notes.txt') })
    expect(read.error).toBeUndefined()
    expect(resultText(read)).toBe('first line\nsecond line\n')
  })

  it('a model turn calls an MCP tool: the request carries the MCP tools and the log the call and its result', async () => {
    const kit = await mcpSpine(
      { servers: { everything: everything() } },
      { model: { script: [{ toolCalls: [{ name: 'mcp__everything__get-sum', arguments: { a: 2, b: 40 } }], answer: 'The sum is 42.' }] } },
    )
    await connected(kit, 'everything')
    const agent = await kit.agent()
    agent.followup('add 2 and 40')
    await agent.whenIdle()

    expect(kit.model.requests.map((request) => request.tools?.map((tool) => tool.name))).toEqual([EVERYTHING_TOOLS, EVERYTHING_TOOLS])
    expect(trace(agent.session).filter((line) => line.startsWith('tool/'))).toEqual([
      'tool/call mcp__everything__get-sum',
      'tool/result ok "The sum of 2 and 40 is 42."',
    ])
  })

  it('expands ${VAR} from the environment into env (and never shows the value), and a server whose variable is unset fails alone', async () => {
    const secret = 'sk-test-0123456789abcdef'
    const kit = await mcpSpine({
      environment: { DSH_TEST_TOKEN: secret },
      servers: {
        everything: everything({ env: { API_TOKEN: '${DSH_TEST_TOKEN}', MODE: '${DSH_TEST_MODE:-plain}' } }),
        broken: everything({ env: { OTHER: '${DSH_TEST_UNSET}' } }),
      },
    })
    await connected(kit, 'everything')
    expect(kit.mcp.status().find((status) => status.name === 'broken')).toEqual({
      name: 'broken',
      transport: 'stdio',
      state: 'failed',
      tools: [],
      error: 'MCP server "broken": environment variable is not set: DSH_TEST_UNSET (in env.OTHER)',
      attempts: 0,
    })
    const agent = await kit.agent()
    const env = JSON.parse(resultText(await execute(kit, agent, 'mcp__everything__get-env', {}))) as Record<string, string>
    // The child got the expanded values; the result the model (and the log) sees has the secret redacted.
    expect({ API_TOKEN: env.API_TOKEN, MODE: env.MODE }).toEqual({ API_TOKEN: '[redacted]', MODE: 'plain' })
    expect(JSON.stringify(kit.mcp.status())).not.toContain(secret)
  })
})
