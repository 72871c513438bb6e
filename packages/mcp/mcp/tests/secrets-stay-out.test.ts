import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { connected, execute, mcpSpine, resultText, stateOf } from './helpers'
import { TestHttpServer } from './http-server'

const servers: TestHttpServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop()
})

const SECRET = 'dsh-secret-7f3a9c2e51'

describe('secrets in env and headers never reach the log, an error or the status (R-MCP-3)', () => {
  it('a header token is sent, but results, errors, status and events show [redacted]', async () => {
    const http = await TestHttpServer.start()
    servers.push(http)
    const kit = await mcpSpine(
      { environment: { DSH_TEST_TOKEN: SECRET }, servers: { web: { url: http.url, headers: { Authorization: 'Bearer ${DSH_TEST_TOKEN}' } } } },
      { model: { script: [{ toolCalls: [{ name: 'mcp__web__whoami', arguments: {} }], answer: 'done' }] } },
    )
    const events: unknown[] = []
    kit.root.on('mcp/state', (change) => void events.push(change))
    kit.root.on('mcp/tools', (change) => void events.push(change))
    await connected(kit, 'web')
    const agent = await kit.agent()
    agent.followup('who am I')
    await agent.whenIdle()
    // The server got the real header; the model (and the log) read the whole value redacted.
    expect(agent.session.events.flatMap((event) => (event.type === 'tool/result' ? [event.data.message.content] : []))).toEqual([
      [{ type: 'tool-result', toolCallId: expect.any(String), content: [{ type: 'text', text: 'authorization: [redacted]' }] }],
    ])

    await http.stop()
    const failure = await execute(kit, agent, 'mcp__web__add', { a: 1, b: 1 })
    expect(failure.error?.code).toBe('SERVER_UNAVAILABLE')
    await stateOf(kit, 'web', (status) => status.state === 'failed')
    const everything = JSON.stringify([agent.session.events, events, kit.mcp.status(), failure])
    expect(everything).not.toContain(SECRET)
  })

  it("a tool's input schema that quotes an env value (a connection string) reaches the request and the log redacted", async () => {
    const url = `postgres://app:${SECRET}@db.internal:5432/main`
    const kit = await mcpSpine(
      {
        environment: { DSH_TEST_DB: url },
        servers: { db: { command: process.execPath, args: [fileURLToPath(new URL('./fixtures/env-schema-server.mjs', import.meta.url))], env: { DB_URL: '${DSH_TEST_DB}' } } },
      },
      { model: { script: [{ answer: 'ok' }] } },
    )
    await connected(kit, 'db')
    const agent = await kit.agent()
    agent.followup('hello')
    await agent.whenIdle()
    const header = agent.session.events.find((event) => event.type === 'request/header')
    const tool = header?.type === 'request/header' ? header.data.tools.find((entry) => entry.name === 'mcp__db__query') : undefined
    // A URL's userinfo is cut first (so the host stays readable), as in the description.
    const shown = 'postgres://[redacted]@db.internal:5432/main'
    expect(tool).toMatchObject({
      description: `Runs SQL on ${shown}.`,
      parameters: { properties: { sql: { description: `The SQL to run on ${shown}` }, database: { default: shown } } },
    })
    expect(JSON.stringify(agent.session.events)).not.toContain(SECRET)
    expect(JSON.stringify(kit.model.requests)).not.toContain(SECRET)
  })

  it('a description cut to maxDescriptionChars never leaves a piece of a secret', async () => {
    const url = `postgres://app:${SECRET}@db.internal:5432/main`
    const kit = await mcpSpine({
      environment: { DSH_TEST_DB: url },
      maxDescriptionChars: 40,
      servers: { db: { command: process.execPath, args: [fileURLToPath(new URL('./fixtures/env-schema-server.mjs', import.meta.url))], env: { DB_URL: '${DSH_TEST_DB}' } } },
    })
    await connected(kit, 'db')
    const agent = await kit.agent()
    const description = kit.root.tools.schemas(agent).find((entry) => entry.name === 'mcp__db__query')!.description
    // The cut falls inside the secret in the server's text; redacted first, it falls after it.
    expect(description).toBe('Runs SQL on postgres://[redacted]@db.in…')
    for (let i = 0; i + 6 <= SECRET.length; i++) expect(description).not.toContain(SECRET.slice(i, i + 6))
  })

  it("a server that prints its env to stderr: the status shows the tail with the secret redacted", async () => {
    const kit = await mcpSpine({
      environment: { DSH_TEST_KEY: SECRET },
      servers: {
        noisy: { command: process.execPath, args: ['-e', 'console.error("starting with key=" + process.env.API_KEY); process.exit(3)'], env: { API_KEY: '${DSH_TEST_KEY}' } },
      },
    })
    await stateOf(kit, 'noisy', (status) => status.state === 'failed')
    await vi.waitFor(() => expect(kit.mcp.status()[0]!.stderr).toContain('starting with key=[redacted]'), { timeout: 20_000 })
    expect(JSON.stringify(kit.mcp.status())).not.toContain(SECRET)
  })

  it('the stderr tail never starts with a piece of a secret', async () => {
    // One long line: the tail's first 2,000 characters from the end begin inside the secret.
    const kit = await mcpSpine({
      environment: { DSH_TEST_KEY: SECRET },
      servers: {
        noisy: {
          command: process.execPath,
          args: ['-e', 'process.stderr.write("x".repeat(100) + process.env.API_KEY + "y".repeat(1990), () => process.exit(3))'],
          env: { API_KEY: '${DSH_TEST_KEY}' },
        },
      },
    })
    await stateOf(kit, 'noisy', (status) => status.state === 'failed')
    await vi.waitFor(() => expect(kit.mcp.status()[0]!.stderr).toContain('y'.repeat(1990)), { timeout: 20_000 })
    const stderr = kit.mcp.status()[0]!.stderr!
    for (let i = 0; i + 6 <= SECRET.length; i++) expect(stderr).not.toContain(SECRET.slice(i, i + 6))
  })

  it('an unset variable is named in the error, and no value is', async () => {
    const kit = await mcpSpine({ environment: { DSH_TEST_KEY: SECRET }, servers: { half: { url: 'http://127.0.0.1:1/${DSH_TEST_KEY}', headers: { 'X-Key': '${DSH_TEST_MISSING}' } } } })
    expect(kit.mcp.status()).toEqual([
      { name: 'half', transport: 'http', state: 'failed', tools: [], error: 'MCP server "half": environment variable is not set: DSH_TEST_MISSING (in headers.X-Key)', attempts: 0 },
    ])
  })
})
