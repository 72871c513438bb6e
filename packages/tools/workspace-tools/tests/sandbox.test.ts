import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { hasBubblewrap, mount, processesWith, tempDir } from './helpers'
import type { WorkspaceToolsOptions } from '@deepseek-ai/dsh-workspace-tools'

const SKIP_REASON = 'bubblewrap (bwrap) is not installed here; `apt-get install bubblewrap` to run the sandbox tests'
const required = { shell: { sandbox: 'bubblewrap' } } satisfies Partial<WorkspaceToolsOptions>

let server: Server | undefined
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
})

/** The shell's name as it prefixes its error messages (its path, as found on the PATH). */
async function shellName(): Promise<string> {
  return execFileSync('sh', ['-c', 'command -v bash || echo /bin/sh'], { encoding: 'utf8' }).trim()
}

/** A workspace with a sibling directory outside it. */
function layout() {
  const base = tempDir()
  const root = join(base, 'ws')
  const outside = join(base, 'outside')
  mkdirSync(root)
  mkdirSync(outside)
  return { root, outside }
}

describe('shell inside bubblewrap', () => {
  it('denies a write outside the workspace and allows one inside', async ({ skip }) => {
    skip(!hasBubblewrap(), SKIP_REASON)
    const { root, outside } = layout()
    const { ctx, run } = await mount(root, required)
    expect(ctx.workspaceTools.sandbox.kind).toBe('bubblewrap')
    // Outside the private /tmp, the rest of the file system is there but read-only.
    const elsewhere = join(tempDir('dsh-ws-outside-', '/var/tmp'), 'pwned.txt')
    expect(await run('shell', { command: `echo pwned > '${elsewhere}'` })).toEqual({
      code: 'ok',
      text: `${await shellName()}: line 1: ${elsewhere}: Read-only file system\n[exit code 1]`,
    })
    expect(existsSync(elsewhere)).toBe(false)
    // A sibling of the workspace under /tmp is not even visible: the sandbox's /tmp is its own.
    const sibling = join(outside, 'pwned.txt')
    expect((await run('shell', { command: `echo pwned > '${sibling}'` })).text).toMatch(/No such file or directory\n\[exit code 1\]$/)
    expect(existsSync(sibling)).toBe(false)
    expect(await run('shell', { command: 'echo kept > inside.txt && cat inside.txt' })).toEqual({ code: 'ok', text: 'kept\n[exit code 0]' })
    expect(readFileSync(join(root, 'inside.txt'), 'utf8')).toBe('kept\n')
  })

  it('has no network unless allowed', async ({ skip }) => {
    skip(!hasBubblewrap(), SKIP_REASON)
    server = createServer((socket) => socket.end())
    const port = await new Promise<number>((resolve) => server!.listen(0, '127.0.0.1', () => resolve((server!.address() as { port: number }).port)))
    const command = `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo connected || echo refused`
    const { root } = layout()
    const closed = await mount(root, required)
    expect(await closed.run('shell', { command })).toEqual({ code: 'ok', text: 'refused\n[exit code 0]' })
    const open = await mount(root, { shell: { sandbox: 'bubblewrap', network: true } })
    expect(await open.run('shell', { command })).toEqual({ code: 'ok', text: 'connected\n[exit code 0]' })
  })

  it('a cancel stops every process of the sandbox', async ({ skip }) => {
    skip(!hasBubblewrap(), SKIP_REASON)
    const { root } = layout()
    const { run } = await mount(root, required)
    const marker = `${4000 + Math.floor(Math.random() * 1000)}.${process.pid}`
    const controller = new AbortController()
    const pending = run('shell', { command: `sleep ${marker} & touch started; wait` }, { signal: controller.signal })
    await vi.waitFor(() => expect(existsSync(join(root, 'started'))).toBe(true), { timeout: 20_000, interval: 20 })
    await vi.waitFor(() => expect(processesWith(`sleep\u0000${marker}`).length).toBeGreaterThan(0), { timeout: 20_000, interval: 20 })
    controller.abort()
    expect(await pending).toEqual({ code: 'ok', text: '[no output]\n[cancelled: the command and every process it started were stopped]' })
    await vi.waitFor(() => expect(processesWith(`sleep\u0000${marker}`)).toEqual([]), { timeout: 20_000, interval: 50 })
  })

  it('what a command leaves running dies with the sandbox, and the result does not report it', async ({ skip }) => {
    skip(!hasBubblewrap(), SKIP_REASON)
    const { root } = layout()
    const { run } = await mount(root, required)
    // bubblewrap reports the shell's exit before its own init has exited, and tears the namespace
    // down as it does: counting the group's live members then only measured how fast that went (and
    // its init, still there, made a command that left nothing get the note now and then).
    const marker = `${4000 + Math.floor(Math.random() * 1000)}.${process.pid}`
    expect(await run('shell', { command: `sleep ${marker} & echo started` })).toEqual({ code: 'ok', text: 'started\n[exit code 0]' })
    await vi.waitFor(() => expect(processesWith(`sleep\u0000${marker}`)).toEqual([]), { timeout: 20_000, interval: 50 })
  })

  it('the tool tells the model, and the approval question the person, that the shell is confined', async ({ skip }) => {
    skip(!hasBubblewrap(), SKIP_REASON)
    const { root } = layout()
    const { ctx } = await mount(root, required)
    const sentence = 'Sandboxed (bubblewrap): only the workspace and a private /tmp are writable, the rest of the file system is read-only, and there is no network.'
    expect(ctx.tools.definition('shell')!.description).toContain(sentence)
    expect(ctx.workspaceTools.describe({ tool: ctx.tools.definition('shell')!, args: { command: 'make' } })).toBe(`run "make" in the workspace. ${sentence}`)
  })
})

describe('shell without a sandbox', () => {
  it('says plainly, to the model and in the approval question, that it is not confined', async () => {
    const root = tempDir()
    const { ctx } = await mount(root, { shell: { sandbox: 'off' } })
    const sentence =
      'NOT sandboxed (the sandbox is turned off in the configuration (shell.sandbox: off)): the command runs with the full permissions of the user running the agent and can read and change files outside the workspace and use the network.'
    expect(ctx.workspaceTools.sandbox).toEqual({ kind: 'none', reason: 'the sandbox is turned off in the configuration (shell.sandbox: off)' })
    expect(ctx.tools.definition('shell')!.description).toContain(sentence)
    expect(ctx.workspaceTools.describe({ tool: ctx.tools.definition('shell')!, args: { command: 'make' } })).toBe(`run "make" in the workspace. ${sentence}`)
  })

  it('a required sandbox that cannot run stops the plugin with SANDBOX_UNAVAILABLE', async () => {
    const root = tempDir()
    const path = process.env.PATH
    process.env.PATH = tempDir()
    try {
      await expect(mount(root, required)).rejects.toMatchObject({
        code: 'SANDBOX_UNAVAILABLE',
        message: 'shell.sandbox is "bubblewrap" but bubblewrap (bwrap) is not installed',
      })
    } finally {
      process.env.PATH = path
    }
  })
})
