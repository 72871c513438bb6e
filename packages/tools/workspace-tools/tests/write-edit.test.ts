import { execFile } from 'node:child_process'
import { chmodSync, linkSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { fakeAgent, mount, tempDir, writeTree } from './helpers'

const execFileAsync = promisify(execFile)
const repository = fileURLToPath(new URL('../../../..', import.meta.url))
const child = fileURLToPath(new URL('./fixtures/limited-write-child.ts', import.meta.url))

describe('write_file', () => {
  it('creates a file (and missing directories) without a read, and reads back what it wrote', async () => {
    const root = tempDir()
    const { run } = await mount(root)
    expect(await run('write_file', { path: 'notes/today.md', content: 'héllo\n' })).toEqual({ code: 'ok', text: 'Wrote 7 bytes to notes/today.md' })
    expect(readFileSync(join(root, 'notes/today.md'), 'utf8')).toBe('héllo\n')
    expect(await run('read_file', { path: 'notes/today.md' })).toEqual({ code: 'ok', text: '     1\théllo' })
  })

  it('replaces an existing file only after the agent read it, and only if it did not change since', async () => {
    const root = tempDir()
    writeTree(root, { 'a.txt': 'one\n' })
    const { run } = await mount(root)
    expect(await run('write_file', { path: 'a.txt', content: 'two\n' })).toEqual({
      code: 'NOT_READ',
      text: 'Error: write_file refused: you have not read a.txt yet; read it with read_file first, then write_file it',
    })
    await run('read_file', { path: 'a.txt' })
    writeFileSync(join(root, 'a.txt'), 'changed by the person\n')
    expect(await run('write_file', { path: 'a.txt', content: 'two\n' })).toEqual({
      code: 'STALE_FILE',
      text: 'Error: write_file refused: a.txt changed on disk since you last read it (someone or something else edited it); read it again with read_file, then redo the change',
    })
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('changed by the person\n')
    await run('read_file', { path: 'a.txt' })
    expect(await run('write_file', { path: 'a.txt', content: 'two\n' })).toEqual({ code: 'ok', text: 'Wrote 4 bytes to a.txt' })
    // What it wrote counts as read: a second write needs no read in between.
    expect(await run('write_file', { path: 'a.txt', content: 'three\n' })).toEqual({ code: 'ok', text: 'Wrote 6 bytes to a.txt' })
  })

  it('refuses a directory', async () => {
    const root = tempDir()
    writeTree(root, { 'src/a.ts': '' })
    const { run } = await mount(root)
    expect(await run('write_file', { path: 'src', content: 'x' })).toEqual({ code: 'IS_A_DIRECTORY', text: 'Error: src is a directory; write_file changes files, not directories' })
  })
})

describe('edit_file', () => {
  async function readied(files: Record<string, string>) {
    const root = tempDir()
    writeTree(root, files)
    const mounted = await mount(root)
    for (const path of Object.keys(files)) await mounted.run('read_file', { path })
    return { root, ...mounted }
  }

  it('replaces a unique passage and says where', async () => {
    const { root, run } = await readied({ 'a.ts': 'const a = 1\nconst b = 2\nconst c = 3\n' })
    expect(await run('edit_file', { path: 'a.ts', old_string: 'const b = 2', new_string: 'const b = 20\nconst bb = 21' })).toEqual({
      code: 'ok',
      text: 'Edited a.ts: replaced 1 occurrence at line 2',
    })
    expect(readFileSync(join(root, 'a.ts'), 'utf8')).toBe('const a = 1\nconst b = 20\nconst bb = 21\nconst c = 3\n')
    // Its own edit counts as read: a second edit needs no read in between.
    expect((await run('edit_file', { path: 'a.ts', old_string: 'const c = 3', new_string: 'const c = 30' })).code).toBe('ok')
  })

  it('refuses a missing passage and an ambiguous one with the count, changing nothing', async () => {
    const { root, run } = await readied({ 'a.ts': 'x = 1\ny = 2\nx = 1\nx = 1\n' })
    expect(await run('edit_file', { path: 'a.ts', old_string: 'z = 3', new_string: 'z = 4' })).toEqual({
      code: 'NO_MATCH',
      text: "Error: old_string occurs 0 times in a.ts; it must match the file exactly, whitespace and indentation included, without read_file's line-number prefix (read the file again if unsure)",
    })
    expect(await run('edit_file', { path: 'a.ts', old_string: 'x = 1', new_string: 'x = 9' })).toEqual({
      code: 'AMBIGUOUS_MATCH',
      text: 'Error: old_string occurs 3 times in a.ts (at lines 1, 3, 4); include more of the surrounding lines to make it unique, or set replace_all to replace every occurrence',
    })
    expect(readFileSync(join(root, 'a.ts'), 'utf8')).toBe('x = 1\ny = 2\nx = 1\nx = 1\n')
    expect(await run('edit_file', { path: 'a.ts', old_string: 'x = 1', new_string: 'x = $&$1', replace_all: true })).toEqual({
      code: 'ok',
      text: 'Edited a.ts: replaced 3 occurrences (at lines 1, 3, 4)',
    })
    // The replacement is literal: `$&` and `$1` are not patterns.
    expect(readFileSync(join(root, 'a.ts'), 'utf8')).toBe('x = $&$1\ny = 2\nx = $&$1\nx = $&$1\n')
  })

  it('refuses a file the agent has not read, or that changed since it read it', async () => {
    const { root, run } = await readied({ 'a.ts': 'a\n' })
    writeTree(root, { 'unread.ts': 'u\n' })
    expect(await run('edit_file', { path: 'unread.ts', old_string: 'u', new_string: 'v' })).toEqual({
      code: 'NOT_READ',
      text: 'Error: edit_file refused: you have not read unread.ts yet; read it with read_file first, then edit_file it',
    })
    writeFileSync(join(root, 'a.ts'), 'a\nadded by a formatter\n')
    expect(await run('edit_file', { path: 'a.ts', old_string: 'a', new_string: 'b' })).toMatchObject({ code: 'STALE_FILE' })
    expect(readFileSync(join(root, 'a.ts'), 'utf8')).toBe('a\nadded by a formatter\n')
  })

  it("one agent's read does not let another agent edit", async () => {
    const { run } = await readied({ 'a.ts': 'a\n' })
    expect((await run('edit_file', { path: 'a.ts', old_string: 'a', new_string: 'b' }, { agent: fakeAgent('other') })).code).toBe('NOT_READ')
  })

  it('matches the LF text the model read in a CRLF file, and keeps the CRLF line ends', async () => {
    const { root, run } = await readied({ 'dos.txt': 'one\r\ntwo\r\nthree\r\n' })
    expect((await run('edit_file', { path: 'dos.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' })).code).toBe('ok')
    expect(readFileSync(join(root, 'dos.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n')
  })

  it('keeps a CRLF file CRLF when the new text adds lines to a passage that had none', async () => {
    const { root, run } = await readied({ 'dos.txt': 'one\r\ntwo\r\n' })
    expect((await run('edit_file', { path: 'dos.txt', old_string: 'one', new_string: 'one\nand a half' })).code).toBe('ok')
    expect(readFileSync(join(root, 'dos.txt'), 'utf8')).toBe('one\r\nand a half\r\ntwo\r\n')
  })

  it('refuses an empty or unchanged passage, a missing file, and a file that is not UTF-8', async () => {
    const { root, run } = await readied({ 'a.ts': 'a\n' })
    expect(await run('edit_file', { path: 'a.ts', old_string: '', new_string: 'b' })).toEqual({
      code: 'INVALID_ARGUMENTS',
      text: 'Error: old_string is empty; to create a file or replace all of it use write_file',
    })
    expect(await run('edit_file', { path: 'a.ts', old_string: 'a', new_string: 'a' })).toEqual({
      code: 'INVALID_ARGUMENTS',
      text: 'Error: old_string and new_string are the same; there is nothing to change',
    })
    expect(await run('edit_file', { path: 'b.ts', old_string: 'a', new_string: 'b' })).toEqual({
      code: 'NOT_FOUND',
      text: 'Error: b.ts does not exist; use write_file to create it',
    })
    writeFileSync(join(root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
    await run('read_file', { path: 'latin1.txt' })
    expect(await run('edit_file', { path: 'latin1.txt', old_string: 'caf', new_string: 'tea' })).toEqual({
      code: 'BINARY_FILE',
      text: 'Error: latin1.txt is not a UTF-8 text file; edit_file would corrupt it',
    })
  })
})

describe('a write the file system refuses part way', () => {
  it('is a FILE_SYSTEM error saying so, and leaves the file as it was (a created one is removed)', { timeout: 60_000 }, async () => {
    // A child process with a 1 MiB file size limit (RLIMIT_FSIZE) writes 2 MB: the write fails part
    // way with EFBIG, as a full disk fails one with ENOSPC.
    const root = tempDir()
    const old = 'keep me\n'.repeat(2_000)
    writeTree(root, { 'keep.txt': old })
    const { stdout, stderr } = await execFileAsync(
      'bash',
      ['-c', 'ulimit -f 1024; exec "$@"', '_', process.execPath, '--conditions=dsh-source', '--import', 'tsx', child, root, '2000000'],
      { cwd: repository, env: { ...process.env, TSX_DISABLE_CACHE: '1' } },
    )
    expect({ results: JSON.parse(stdout), stderr }).toEqual({
      results: {
        write: { code: 'FILE_SYSTEM', text: 'Error: keep.txt would be larger than this process may write a file (EFBIG); keep.txt was left as it was' },
        afterWrite: 'unchanged',
        edit: { code: 'FILE_SYSTEM', text: 'Error: keep.txt would be larger than this process may write a file (EFBIG); keep.txt was left as it was' },
        afterEdit: 'unchanged',
        create: { code: 'FILE_SYSTEM', text: 'Error: new.txt would be larger than this process may write a file (EFBIG); new.txt was not created' },
        afterCreate: 'missing',
      },
      stderr: '',
    })
    expect(readFileSync(join(root, 'keep.txt'), 'utf8')).toBe(old)
  })
})

describe('a file with hard links', () => {
  it('is replaced, not rewritten, so a name outside the workspace (a package store) keeps its content; the mode stays', async () => {
    // pnpm hard-links node_modules files to its store outside the project: a rewrite in place
    // would change the store's copy, and with it every other project that links it.
    const base = tempDir()
    writeTree(base, { 'store/index.js': 'module.exports = 1\n', 'ws/node_modules/dep/.keep': '' })
    const root = join(base, 'ws')
    linkSync(join(base, 'store/index.js'), join(root, 'node_modules/dep/index.js'))
    chmodSync(join(root, 'node_modules/dep/index.js'), 0o640)
    const { run } = await mount(root)
    await run('read_file', { path: 'node_modules/dep/index.js' })
    expect(await run('edit_file', { path: 'node_modules/dep/index.js', old_string: '1', new_string: '2' })).toEqual({
      code: 'ok',
      text: 'Edited node_modules/dep/index.js: replaced 1 occurrence at line 1',
    })
    expect(await run('write_file', { path: 'node_modules/dep/index.js', content: 'module.exports = 3\n' })).toEqual({
      code: 'ok',
      text: 'Wrote 19 bytes to node_modules/dep/index.js',
    })
    const inside = statSync(join(root, 'node_modules/dep/index.js'))
    expect({
      store: readFileSync(join(base, 'store/index.js'), 'utf8'),
      workspace: readFileSync(join(root, 'node_modules/dep/index.js'), 'utf8'),
      links: inside.nlink,
      mode: (inside.mode & 0o777).toString(8),
      leftovers: readdirSync(join(root, 'node_modules/dep')).sort(),
    }).toEqual({ store: 'module.exports = 1\n', workspace: 'module.exports = 3\n', links: 1, mode: '640', leftovers: ['.keep', 'index.js'] })
  })
})

describe('two agents changing one file at once', () => {
  it('one change wins and the other is refused as stale: no change is lost', async () => {
    const root = tempDir()
    writeTree(root, { 'shared.txt': 'alpha\nbeta\n' })
    const { run } = await mount(root)
    const [a, b] = [fakeAgent('a'), fakeAgent('b')]
    for (let round = 0; round < 20; round++) {
      writeFileSync(join(root, 'shared.txt'), 'alpha\nbeta\n')
      for (const agent of [a, b]) await run('read_file', { path: 'shared.txt' }, { agent })
      const results = await Promise.all([
        run('edit_file', { path: 'shared.txt', old_string: 'alpha', new_string: 'ALPHA' }, { agent: a }),
        run('write_file', { path: 'shared.txt', content: 'alpha\nBETA\n' }, { agent: b }),
      ])
      const file = readFileSync(join(root, 'shared.txt'), 'utf8')
      const codes = results.map((result) => result.code).sort()
      expect({ round, codes, file }).toEqual({
        round,
        codes: ['STALE_FILE', 'ok'],
        file: results[0]!.code === 'ok' ? 'ALPHA\nbeta\n' : 'alpha\nBETA\n',
      })
    }
  })

  it('two agents creating the same new file: one creates it, the other is refused (it has not read what the first wrote)', async () => {
    const root = tempDir()
    const { run } = await mount(root)
    for (let round = 0; round < 20; round++) {
      const name = `new-${round}.txt`
      const results = await Promise.all([
        run('write_file', { path: name, content: 'from a\n' }, { agent: fakeAgent('a') }),
        run('write_file', { path: name, content: 'from b\n' }, { agent: fakeAgent('b') }),
      ])
      const winner = results[0]!.code === 'ok' ? 'a' : 'b'
      expect({ round, codes: results.map((result) => result.code).sort(), file: readFileSync(join(root, name), 'utf8') }).toEqual({
        round,
        codes: ['NOT_READ', 'ok'],
        file: `from ${winner}\n`,
      })
    }
  })
})
