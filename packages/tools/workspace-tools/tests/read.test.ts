import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { mount, sandboxTree, tempDir, writeTree } from './helpers'

describe('read_file', () => {
  it('returns the lines numbered like cat -n, also through `..` that stays inside, an absolute path inside, or a symlink inside', async () => {
    const { root } = sandboxTree()
    const { run } = await mount(root)
    const expected = { code: 'ok', text: '     1\t# Sandbox\n     2\tline two' }
    expect(await run('read_file', { path: 'README.md' })).toEqual(expected)
    expect(await run('read_file', { path: 'src/../README.md' })).toEqual(expected)
    expect(await run('read_file', { path: join(root, 'README.md') })).toEqual(expected)
    expect(await run('read_file', { path: 'readme-link' })).toEqual(expected)
    expect(await run('read_file', { path: 'src-link/main.ts' })).toEqual({ code: 'ok', text: '     1\texport const answer = 42\n     2\t// TODO: more' })
  })

  it('reads a range with offset and limit, and says where to read on', async () => {
    const root = tempDir()
    writeTree(root, { 'ten.txt': Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n' })
    const { run } = await mount(root)
    expect(await run('read_file', { path: 'ten.txt', offset: 4, limit: 3 })).toEqual({
      code: 'ok',
      text: '     4\tline 4\n     5\tline 5\n     6\tline 6\n[showing lines 4-6 of 10; read on with offset 7]',
    })
    expect(await run('read_file', { path: 'ten.txt', offset: 9 })).toEqual({ code: 'ok', text: '     9\tline 9\n    10\tline 10' })
    expect(await run('read_file', { path: 'ten.txt', offset: 11 })).toEqual({ code: 'ok', text: '[offset 11 is past the end: ten.txt has 10 lines]' })
  })

  it('stops at the configured line count, cuts long lines and long results, each with a note', async () => {
    const root = tempDir()
    writeTree(root, {
      'many.txt': 'x\n'.repeat(5),
      'wide.txt': `${'é'.repeat(30)}\nshort\n`,
      'big.txt': `${'y'.repeat(40)}\n`.repeat(10),
    })
    const { run } = await mount(root, { limits: { readLines: 3, maxLineChars: 20, maxOutputChars: 100 } })
    expect(await run('read_file', { path: 'many.txt' })).toEqual({
      code: 'ok',
      text: '     1\tx\n     2\tx\n     3\tx\n[showing lines 1-3 of 5; read on with offset 4]',
    })
    expect(await run('read_file', { path: 'wide.txt' })).toEqual({
      code: 'ok',
      text: `     1\t${'é'.repeat(20)}… [10 more characters]\n     2\tshort`,
    })
    // Each numbered line of big.txt is 20 + 7 + 23 characters; two fit in 100.
    expect(await run('read_file', { path: 'big.txt', limit: 10 })).toEqual({
      code: 'ok',
      text: `     1\t${'y'.repeat(20)}… [20 more characters]\n     2\t${'y'.repeat(20)}… [20 more characters]\n[showing lines 1-2 of 10; read on with offset 3]`,
    })
  })

  it('reads CRLF files as lines without the carriage returns, and says when a file is empty', async () => {
    const root = tempDir()
    writeTree(root, { 'dos.txt': 'one\r\ntwo\r\n', 'empty.txt': '' })
    const { run } = await mount(root)
    expect(await run('read_file', { path: 'dos.txt' })).toEqual({ code: 'ok', text: '     1\tone\n     2\ttwo' })
    expect(await run('read_file', { path: 'empty.txt' })).toEqual({ code: 'ok', text: '[empty.txt is empty]' })
  })

  it('says what is wrong with a missing file, a directory, a binary file and a file over the size cap', async () => {
    const root = tempDir()
    writeTree(root, { 'src/a.ts': 'a\n', 'blob.bin': Buffer.from([0x89, 0x50, 0x00, 0x01]), 'huge.txt': 'z'.repeat(2048) })
    const { run } = await mount(root, { limits: { maxFileBytes: 1024 } })
    expect(await run('read_file', { path: 'nope.md' })).toEqual({ code: 'NOT_FOUND', text: 'Error: nope.md does not exist' })
    expect(await run('read_file', { path: 'src' })).toEqual({ code: 'IS_A_DIRECTORY', text: 'Error: src is a directory; use list_dir to see what it holds' })
    expect(await run('read_file', { path: 'blob.bin' })).toEqual({ code: 'BINARY_FILE', text: 'Error: blob.bin is a binary file (4 bytes); read_file shows text only' })
    expect(await run('read_file', { path: 'huge.txt' })).toEqual({
      code: 'FILE_TOO_LARGE',
      text: "Error: huge.txt is 2 KiB, more than read_file loads (1 KiB); find the lines you need with grep, or print a range with shell (e.g. sed -n '100,200p')",
    })
  })

  it('says when a file is not UTF-8, so the model does not write the lossy text back over it', async () => {
    const root = tempDir()
    // "café" in Latin-1: the é is one byte that is not UTF-8.
    writeTree(root, { 'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6b, 0x0a]) })
    const { run } = await mount(root)
    expect(await run('read_file', { path: 'latin1.txt' })).toEqual({
      code: 'ok',
      text:
        '     1\tcaf\ufffd\n     2\tok\n' +
        '[latin1.txt is not UTF-8 text: bytes that are not UTF-8 are shown as \ufffd; writing this text back would lose them, so change the file with shell (e.g. sed) rather than write_file]',
    })
  })

  it('refuses offset and limit below 1', async () => {
    const root = tempDir()
    writeFileSync(join(root, 'a.txt'), 'a\n')
    const { run } = await mount(root)
    expect((await run('read_file', { path: 'a.txt', offset: 0 })).code).toBe('INVALID_ARGUMENTS')
    expect((await run('read_file', { path: 'a.txt', limit: 0 })).code).toBe('INVALID_ARGUMENTS')
  })
})

describe('list_dir', () => {
  it('lists one entry per line, sorted; directories (and links to them) end with "/"; special files say what they are', async () => {
    const { root } = sandboxTree()
    const { run } = await mount(root)
    expect(await run('list_dir', { path: '.' })).toEqual({
      code: 'ok',
      text: [
        'README.md',
        'dangling [broken link]',
        'node_modules/',
        'outside-dir/',
        'pipe [FIFO]',
        'readme-link',
        'secret-link',
        'src/',
        'src-link/',
      ].join('\n'),
    })
    expect(await run('list_dir', {})).toEqual(await run('list_dir', { path: '.' }))
    expect(await run('list_dir', { path: 'src' })).toEqual({ code: 'ok', text: 'deep/\nmain.ts' })
  })

  it('caps the listing with a note, says when a directory is empty, and refuses a file', async () => {
    const root = tempDir()
    writeTree(root, { 'a.txt': '', 'b.txt': '', 'c.txt': '', 'd.txt': '', 'e/.keep': '' })
    const { run } = await mount(root, { limits: { maxListEntries: 2 } })
    expect(await run('list_dir', { path: '.' })).toEqual({ code: 'ok', text: 'a.txt\nb.txt\n[3 more entries not shown]' })
    const { run: plain } = await mount(tempDir())
    expect(await plain('list_dir', { path: '.' })).toEqual({ code: 'ok', text: '[. is empty]' })
    expect(await run('list_dir', { path: 'a.txt' })).toEqual({ code: 'NOT_A_DIRECTORY', text: 'Error: a.txt is a file, not a directory; use read_file to read it' })
  })
})
