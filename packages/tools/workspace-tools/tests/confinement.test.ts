import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { mount, sandboxTree } from './helpers'

const out = (shown: string, how: string) => ({
  code: 'OUTSIDE_WORKSPACE',
  text: `Error: ${shown} is outside the workspace (it leads out ${how}); the tools only reach files inside the workspace`,
})

describe('every path stays in the workspace', () => {
  it('read_file refuses `..`, an absolute path outside, and symlinks leading out (of the file or a directory on the way)', async () => {
    const { root, outside } = sandboxTree()
    const { run } = await mount(root)
    expect(await run('read_file', { path: '../outside/secret.txt' })).toEqual(out('../outside/secret.txt', "through '..'"))
    expect(await run('read_file', { path: join(outside, 'secret.txt') })).toEqual({
      code: 'OUTSIDE_WORKSPACE',
      text: `Error: ${join(outside, 'secret.txt')} is an absolute path outside the workspace; use a path relative to the workspace root`,
    })
    expect(await run('read_file', { path: 'secret-link' })).toEqual(out('secret-link', 'through a symbolic link'))
    expect(await run('read_file', { path: 'outside-dir/secret.txt' })).toEqual(out('outside-dir/secret.txt', 'through a symbolic link'))
    expect(await run('read_file', { path: '/etc/passwd' })).toMatchObject({ code: 'OUTSIDE_WORKSPACE' })
  })

  it('list_dir, glob and grep refuse the same escapes as their starting path', async () => {
    const { root } = sandboxTree()
    const { run } = await mount(root)
    const codes = []
    for (const path of ['..', '/', 'outside-dir', '../outside']) {
      codes.push((await run('list_dir', { path })).code, (await run('glob', { pattern: '*', path })).code, (await run('grep', { pattern: 'TODO', path })).code)
    }
    expect(new Set(codes)).toEqual(new Set(['OUTSIDE_WORKSPACE']))
  })

  it('write_file and edit_file refuse `..`, absolute paths outside, symlinked directories, symlinks out and dangling symlinks; nothing outside changes', async () => {
    const { root, outside } = sandboxTree()
    const { run } = await mount(root)
    const attempts = ['../outside/x.txt', join(outside, 'x.txt'), 'outside-dir/x.txt', 'outside-dir/new/dir/x.txt', 'secret-link']
    const results = []
    for (const path of attempts) {
      results.push((await run('write_file', { path, content: 'pwned' })).code)
      results.push((await run('edit_file', { path, old_string: 'TODO', new_string: 'DONE' })).code)
    }
    expect(results).toEqual(attempts.flatMap(() => ['OUTSIDE_WORKSPACE', 'OUTSIDE_WORKSPACE']))
    expect(await run('write_file', { path: 'dangling', content: 'pwned' })).toEqual({
      code: 'INVALID_PATH',
      text: 'Error: dangling is a symbolic link to a file that does not exist; write to the path it points to instead',
    })
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TODO secret\n')
    expect([existsSync(join(outside, 'x.txt')), existsSync(join(outside, 'missing.txt')), existsSync(join(outside, 'new'))]).toEqual([false, false, false])
  })

  it('refuses a NUL byte, an empty path, an overlong name and an overlong path, in workspace-relative words', async () => {
    const { root } = sandboxTree()
    const { run } = await mount(root)
    expect(await run('read_file', { path: 'README.md\u0000.txt' })).toEqual({ code: 'INVALID_PATH', text: 'Error: the path README.md\u0000.txt contains a NUL byte' })
    expect(await run('write_file', { path: 'a\u0000', content: 'x' })).toMatchObject({ code: 'INVALID_PATH' })
    expect(await run('read_file', { path: '' })).toEqual({ code: 'INVALID_PATH', text: 'Error: the path is empty; use "." for the workspace root' })
    const name = 'n'.repeat(300)
    expect(await run('read_file', { path: name })).toEqual({
      code: 'INVALID_PATH',
      text: `Error: the path ${'n'.repeat(119)}… is too long (a name of 300 bytes; a name may have at most 255 bytes and a whole path 4095)`,
    })
    // Short names, but the whole path (once joined to the root) is longer than the system allows.
    const deep = 'abcdefgh/'.repeat(460)
    for (const tool of ['read_file', 'write_file', 'list_dir'] as const) {
      const result = await run(tool, tool === 'write_file' ? { path: deep, content: 'x' } : { path: deep })
      expect(result.code).toBe('INVALID_PATH')
      expect(result.text).toMatch(/^Error: the path abcdefgh\/abcdefgh\/.*… is too long \(\d+ bytes; a name may have at most 255 bytes and a whole path 4095\)$/)
      expect(result.text).not.toContain(root)
    }
  })

  it('refuses a FIFO without blocking, in every tool; grep and glob pass it by', async () => {
    const { root } = sandboxTree()
    const { run } = await mount(root)
    const fifo = 'Error: pipe is a FIFO (named pipe); the tools only read and write regular files and list directories'
    expect(await run('read_file', { path: 'pipe' })).toEqual({ code: 'NOT_A_REGULAR_FILE', text: fifo })
    expect(await run('list_dir', { path: 'pipe' })).toEqual({ code: 'NOT_A_REGULAR_FILE', text: fifo })
    expect(await run('grep', { pattern: 'x', path: 'pipe' })).toEqual({ code: 'NOT_A_REGULAR_FILE', text: fifo })
    expect(await run('write_file', { path: 'pipe', content: 'x' })).toMatchObject({ code: 'NOT_A_REGULAR_FILE' })
    expect(await run('edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' })).toMatchObject({ code: 'NOT_A_REGULAR_FILE' })
    expect(await run('grep', { pattern: 'Sandbox' })).toEqual({ code: 'ok', text: 'README.md:1: # Sandbox' })
    expect(await run('glob', { pattern: 'p*' })).toEqual({ code: 'ok', text: 'No files match "p*".' })
  })

  it('a device is refused the same way (a workspace rooted at /dev, whose zero would never end)', async () => {
    const { run } = await mount('/dev', { exclude: ['shell'] })
    expect(await run('read_file', { path: 'zero' })).toEqual({
      code: 'NOT_A_REGULAR_FILE',
      text: 'Error: zero is a device; the tools only read and write regular files and list directories',
    })
    expect(await run('write_file', { path: 'null', content: 'x' })).toMatchObject({ code: 'NOT_A_REGULAR_FILE' })
  })
})
