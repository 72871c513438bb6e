import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { mount, sandboxTree, tempDir, writeTree } from './helpers'
import type { WorkspaceToolsOptions } from '@deepseek-ai/dsh-workspace-tools'

const asking = { askBefore: ['write', 'execute'], shell: { sandbox: 'off' } } satisfies Partial<WorkspaceToolsOptions>
const unconfined =
  'NOT sandboxed (the sandbox is turned off in the configuration (shell.sandbox: off)): the command runs with the full permissions of the user running the agent and can read and change files outside the workspace and use the network.'

describe('asking before writes and commands', () => {
  it('asks ctx.approval with a question per tool, then runs the call; reads are never asked about', async () => {
    const root = tempDir()
    writeTree(root, { 'a.ts': 'x = 1\n' })
    const { run, asked } = await mount(root, asking, 'allow')
    expect(await run('read_file', { path: 'a.ts' })).toMatchObject({ code: 'ok' })
    expect(await run('grep', { pattern: 'x' })).toMatchObject({ code: 'ok' })
    expect(await run('write_file', { path: 'notes.txt', content: 'hello' })).toEqual({ code: 'ok', text: 'Wrote 5 bytes to notes.txt' })
    expect(await run('edit_file', { path: 'a.ts', old_string: 'x = 1', new_string: 'x = 2\ny = 3' })).toMatchObject({ code: 'ok' })
    expect(await run('shell', { command: 'echo hi' })).toEqual({ code: 'ok', text: 'hi\n[exit code 0]' })
    expect(asked).toEqual([
      'write_file: write 5 bytes to notes.txt',
      'edit_file: edit a.ts: replace 1 line with 2 lines',
      `shell: run "echo hi" in the workspace. ${unconfined}`,
    ])
  })

  it('a refusal, or no approval service at all, denies the call and changes nothing', async () => {
    const root = tempDir()
    const refused = await mount(root, asking, 'deny')
    expect(await refused.run('write_file', { path: 'a.txt', content: 'x' })).toEqual({ code: 'DENIED', text: 'Error: tool call denied: not approved' })
    expect(await refused.run('shell', { command: 'touch made-by-shell' })).toEqual({ code: 'DENIED', text: 'Error: tool call denied: not approved' })
    const unattended = await mount(root, asking)
    expect(await unattended.run('write_file', { path: 'a.txt', content: 'x' })).toEqual({
      code: 'DENIED',
      text: 'Error: tool call denied: approval required but no approval service is available',
    })
    expect([existsSync(join(root, 'a.txt')), existsSync(join(root, 'made-by-shell'))]).toEqual([false, false])
  })

  it('does not ask about a change that cannot happen (outside, or an edit of a missing file); the refusal keeps its own code', async () => {
    const { root, outside } = sandboxTree()
    const { run, asked } = await mount(root, asking, 'allow')
    expect((await run('write_file', { path: '../outside/x.txt', content: 'x' })).code).toBe('OUTSIDE_WORKSPACE')
    expect((await run('edit_file', { path: 'secret-link', old_string: 'TODO', new_string: 'x' })).code).toBe('OUTSIDE_WORKSPACE')
    expect((await run('edit_file', { path: 'missing.ts', old_string: 'a', new_string: 'b' })).code).toBe('NOT_FOUND')
    expect(asked).toEqual([])
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TODO secret\n')
  })

  it('asks for nothing with askBefore: [] (a permissions plugin decides), and a later denying policy still wins', async () => {
    const root = tempDir()
    const { ctx, run, asked } = await mount(root, { askBefore: [], shell: { sandbox: 'off' } }, 'allow')
    expect((await run('write_file', { path: 'a.txt', content: 'x' })).code).toBe('ok')
    expect(asked).toEqual([])
    ctx.on('tools/pre-execute', async (invocation, next) => (invocation.call.name === 'shell' ? { kind: 'deny', reason: 'no shell today' } : next()))
    expect(await run('shell', { command: 'true' })).toEqual({ code: 'DENIED', text: 'Error: tool call denied: no shell today' })
  })

  it('asks nothing when a permissions service is mounted (ctx.permissions decides and asks), whatever askBefore says', async () => {
    const root = tempDir()
    const { ctx, run, asked } = await mount(root, asking, 'allow')
    await ctx.plugin({ apply: (inner) => void inner.provide('permissions', { decides: true } as never) })
    expect(await run('write_file', { path: 'a.txt', content: 'x' })).toEqual({ code: 'ok', text: 'Wrote 1 bytes to a.txt' })
    expect((await run('shell', { command: 'true' })).code).toBe('ok')
    expect(asked).toEqual([])
  })

  it('describe() gives the same question to a permissions plugin that asks on its own', async () => {
    const root = tempDir()
    const { ctx } = await mount(root, { shell: { sandbox: 'off' } })
    const question = (name: string, args: object) => ctx.workspaceTools.describe({ tool: ctx.tools.definition(name)!, args })
    expect(question('write_file', { path: 'a.txt', content: 'héllo' })).toBe('write 6 bytes to a.txt')
    expect(question('edit_file', { path: 'a.txt', old_string: 'a', new_string: 'b', replace_all: true })).toBe('edit a.txt: replace 1 line with 1 line (every occurrence)')
    expect(question('read_file', { path: 'a.txt' })).toBeUndefined()
    // The person approves the whole command: a long one is quoted in full, its end included.
    const long = `echo ${'a'.repeat(400)}; rm -rf ~/important`
    expect(question('shell', { command: long })).toBe(`run ${JSON.stringify(long)} in the workspace. ${unconfined}`)
    expect(ctx.workspaceTools.describe({ tool: { name: 'other' } as never, args: {} })).toBeUndefined()
  })
})
