import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { CallId } from '@deepseek-ai/dsh-llm'
import { SessionId } from '@deepseek-ai/dsh-session'
import Tools, { type ApprovalRequest } from '@deepseek-ai/dsh-tools'
import { MAX_READ_BYTES, WorkspaceTools } from '@deepseek-ai/dsh-agent-spine-demo'
import { tempDir, writeTree } from './helpers'

/**
 * The sandbox: a workspace with files, a directory, and symlinks that stay
 * inside or lead out to a sibling directory holding a secret.
 */
function sandbox() {
  const base = tempDir('dsh-sandbox-')
  const root = join(base, 'ws')
  const outside = join(base, 'outside')
  writeTree(base, {
    'ws/README.md': '# Sandbox\nline two\n',
    'ws/src/main.ts': 'export const answer = 42\n// TODO: more\n',
    'ws/src/deep/util.ts': 'export const TODO = true\n',
    'ws/node_modules/dep/index.js': '// TODO in a dependency\n',
    'outside/secret.txt': 'TODO secret\n',
  })
  symlinkSync(join(outside, 'secret.txt'), join(root, 'secret-link'))
  symlinkSync(outside, join(root, 'outside-dir'))
  symlinkSync(join(root, 'README.md'), join(root, 'readme-link'))
  symlinkSync(join(root, 'src'), join(root, 'src-link'))
  symlinkSync(join(outside, 'missing.txt'), join(root, 'dangling'))
  return { root, outside }
}

/** `ctx.tools` with the workspace tools, and optionally an approval service that records what it was asked. */
async function mount(root: string, approval?: 'allow' | 'deny') {
  const ctx = new Context()
  await ctx.plugin(Tools)
  const asked: string[] = []
  if (approval) {
    ctx.provide('approval', {
      async request(request: ApprovalRequest) {
        asked.push(`${request.call.name}: ${request.reason}`)
        return approval
      },
    } as never)
  }
  await ctx.plugin(WorkspaceTools, { root })
  // A stand-in agent: the tools service reads only its id (for agent-local tools and scoped events).
  const agent = { id: SessionId('agent') } as unknown as Agent
  let n = 0
  const run = async (name: string, args: Record<string, unknown>) => {
    const result = await ctx.tools.execute({ id: CallId(`call_${++n}`), name, arguments: JSON.stringify(args) }, { agent })
    const block = result.message.content[0] as unknown as { content: { type: string; text: string }[] }
    return { code: result.error?.code ?? 'ok', text: block.content.map((part) => part.text).join('') }
  }
  return { ctx, run, asked }
}

const outsideText = 'is outside the workspace'

describe('read_file', () => {
  it('reads a file inside, also through `..` that stays inside, an absolute path inside, or a symlink inside', async () => {
    const { root } = sandbox()
    const { run } = await mount(root)
    const expected = { code: 'ok', text: '# Sandbox\nline two\n' }
    expect(await run('read_file', { path: 'README.md' })).toEqual(expected)
    expect(await run('read_file', { path: 'src/../README.md' })).toEqual(expected)
    expect(await run('read_file', { path: join(root, 'README.md') })).toEqual(expected)
    expect(await run('read_file', { path: 'readme-link' })).toEqual(expected)
    expect(await run('read_file', { path: 'src-link/main.ts' })).toEqual({ code: 'ok', text: 'export const answer = 42\n// TODO: more\n' })
  })

  it('denies a path that escapes through `..`, an absolute path outside, and a symlink leading out', async () => {
    const { root, outside } = sandbox()
    const { run } = await mount(root)
    expect(await run('read_file', { path: '../outside/secret.txt' })).toEqual({
      code: 'DENIED',
      text: `Error: ../outside/secret.txt ${outsideText} (it leads out through '..'); tools can only reach files inside the workspace`,
    })
    expect(await run('read_file', { path: join(outside, 'secret.txt') })).toEqual({
      code: 'DENIED',
      text: `Error: ${join(outside, 'secret.txt')} is an absolute path outside the workspace; use a path relative to the workspace root`,
    })
    expect(await run('read_file', { path: 'secret-link' })).toEqual({
      code: 'DENIED',
      text: `Error: secret-link ${outsideText} (it leads out through a symbolic link); tools can only reach files inside the workspace`,
    })
    expect(await run('read_file', { path: 'outside-dir/secret.txt' })).toMatchObject({ code: 'DENIED' })
  })

  it('says what is wrong with a missing file, a directory, a binary file, and cuts a long file', async () => {
    const { root } = sandbox()
    writeFileSync(join(root, 'blob.bin'), Buffer.from([0x89, 0x50, 0x00, 0x01]))
    writeFileSync(join(root, 'big.txt'), 'x'.repeat(MAX_READ_BYTES + 10))
    const { run } = await mount(root)
    expect(await run('read_file', { path: 'nope.md' })).toEqual({ code: 'NOT_FOUND', text: 'Error: no such file or directory: nope.md' })
    expect(await run('read_file', { path: 'src' })).toEqual({ code: 'TOOL_ERROR', text: 'Error: src is a directory; use list_dir to see what it holds' })
    expect(await run('read_file', { path: 'blob.bin' })).toEqual({ code: 'TOOL_ERROR', text: 'Error: blob.bin is a binary file (4 bytes); read_file returns text only' })
    expect(await run('read_file', { path: 'big.txt' })).toEqual({
      code: 'ok',
      text: `${'x'.repeat(MAX_READ_BYTES)}\n[truncated: showing the first ${MAX_READ_BYTES} of ${MAX_READ_BYTES + 10} bytes]`,
    })
  })
})

describe('list_dir', () => {
  it('lists one entry per line, sorted, directories with a trailing slash (symlinked ones too)', async () => {
    const { root } = sandbox()
    const { run } = await mount(root)
    expect(await run('list_dir', { path: '.' })).toEqual({
      code: 'ok',
      text: ['README.md', 'dangling', 'node_modules/', 'outside-dir/', 'readme-link', 'secret-link', 'src/', 'src-link/'].join('\n'),
    })
    expect(await run('list_dir', { path: 'src' })).toEqual({ code: 'ok', text: 'deep/\nmain.ts' })
  })

  it('denies listing outside the workspace', async () => {
    const { root } = sandbox()
    const { run } = await mount(root)
    expect((await run('list_dir', { path: '..' })).code).toBe('DENIED')
    expect((await run('list_dir', { path: '/' })).code).toBe('DENIED')
    expect((await run('list_dir', { path: 'outside-dir' })).code).toBe('DENIED')
    expect(await run('list_dir', { path: 'README.md' })).toEqual({ code: 'TOOL_ERROR', text: 'Error: README.md is not a directory; use read_file to read it' })
  })
})

describe('search_files', () => {
  it('finds matching lines under the workspace, skipping node_modules and never following symlinks', async () => {
    const { root } = sandbox()
    const { run } = await mount(root)
    expect(await run('search_files', { pattern: 'TODO' })).toEqual({
      code: 'ok',
      text: 'src/deep/util.ts:1: export const TODO = true\nsrc/main.ts:2: // TODO: more',
    })
    expect(await run('search_files', { pattern: 'answer\\s=', path: 'src' })).toEqual({ code: 'ok', text: 'src/main.ts:1: export const answer = 42' })
    expect(await run('search_files', { pattern: 'no such text' })).toEqual({ code: 'ok', text: '' })
  })

  it('refuses an invalid pattern and a path outside', async () => {
    const { root } = sandbox()
    const { run } = await mount(root)
    expect(await run('search_files', { pattern: '(' })).toEqual({
      code: 'INVALID_ARGUMENTS',
      text: 'Error: invalid arguments for search_files: pattern: not a valid JavaScript regular expression',
    })
    expect((await run('search_files', { pattern: 'TODO', path: '../outside' })).code).toBe('DENIED')
    expect((await run('search_files', { pattern: 'TODO', path: 'outside-dir' })).code).toBe('DENIED')
  })
})

describe('write_file', () => {
  it('asks for approval, then writes (creating directories)', async () => {
    const { root } = sandbox()
    const { run, asked } = await mount(root, 'allow')
    expect(await run('write_file', { path: 'notes/today.md', content: 'héllo' })).toEqual({ code: 'ok', text: 'Wrote 6 bytes to notes/today.md' })
    expect(readFileSync(join(root, 'notes/today.md'), 'utf8')).toBe('héllo')
    expect(asked).toEqual(['write_file: write 6 bytes to notes/today.md'])
  })

  it('is denied when the person says no, or when no approval service is mounted', async () => {
    const { root } = sandbox()
    const refused = await mount(root, 'deny')
    expect(await refused.run('write_file', { path: 'a.txt', content: 'x' })).toEqual({ code: 'DENIED', text: 'Error: tool call denied: not approved' })
    const unattended = await mount(root)
    expect(await unattended.run('write_file', { path: 'a.txt', content: 'x' })).toEqual({
      code: 'DENIED',
      text: 'Error: tool call denied: approval required but no approval service is available',
    })
    expect(existsSync(join(root, 'a.txt'))).toBe(false)
  })

  it('denies writes outside the workspace without asking: `..`, absolute, through a symlinked directory, a symlink out, a dangling symlink', async () => {
    const { root, outside } = sandbox()
    const { run, asked } = await mount(root, 'allow')
    const attempts = ['../outside/x.txt', join(outside, 'x.txt'), 'outside-dir/x.txt', 'outside-dir/new/dir/x.txt', 'secret-link', 'dangling']
    const results = []
    for (const path of attempts) results.push((await run('write_file', { path, content: 'pwned' })).code)
    expect(results).toEqual(attempts.map(() => 'DENIED'))
    expect(asked).toEqual([])
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TODO secret\n')
    expect(existsSync(join(outside, 'x.txt')) || existsSync(join(outside, 'missing.txt')) || existsSync(join(outside, 'new'))).toBe(false)
  })
})

describe('the tool set', () => {
  it('offers four schemas; the readers are concurrency-safe, write_file is exclusive', async () => {
    const { root } = sandbox()
    const { ctx } = await mount(root)
    expect(ctx.tools.schemas().map((schema) => [schema.name, Object.keys((schema.parameters as { properties: object }).properties)])).toEqual([
      ['list_dir', ['path']],
      ['read_file', ['path']],
      ['search_files', ['pattern', 'path']],
      ['write_file', ['path', 'content']],
    ])
    const safe = (name: string, args: object) => ctx.tools.isConcurrencySafe({ name, arguments: JSON.stringify(args) })
    expect([safe('read_file', { path: 'a' }), safe('list_dir', { path: '.' }), safe('search_files', { pattern: 'x' }), safe('write_file', { path: 'a', content: '' })]).toEqual([
      true,
      true,
      true,
      false,
    ])
  })
})
