import { describe, expect, it } from 'vitest'
import { mount, sandboxTree, tempDir, writeTree } from './helpers'

/** A repository-like tree with ignore files at several levels. */
function repository() {
  const root = tempDir()
  writeTree(root, {
    '.gitignore': ['# build output', 'dist/', '*.log', '!keep.log', '/top-only.txt', 'docs/**/draft-*.md', 'trailing.txt   ', ''].join('\n'),
    '.git/info/exclude': 'secret-notes.md\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
    'src/index.ts': 'export const TODO = 1\n',
    'src/dist/also-ignored.ts': '', // `dist/` has no slash before its end: a directory of that name at any depth
    'src/app.log': 'TODO log\n',
    'src/keep.log': 'TODO kept\n',
    'src/.gitignore': 'generated/\n!important.log\n',
    'src/generated/out.ts': 'TODO generated\n',
    'src/important.log': 'TODO important\n',
    'dist/bundle.js': 'TODO bundle\n',
    'top-only.txt': 'TODO top\n',
    'nested/top-only.txt': 'TODO nested\n',
    'docs/a/b/draft-1.md': 'TODO draft\n',
    'docs/a/final.md': 'TODO final\n',
    'trailing.txt': 'TODO trailing\n',
    'secret-notes.md': 'TODO secret\n',
    'node_modules/dep/index.js': 'TODO dep\n',
  })
  return root
}

describe('glob', () => {
  it('matches paths relative to the search directory: * within a level, ** across levels, {a,b}, [set], ?', async () => {
    const { root } = sandboxTree()
    const { run } = await mount(root)
    expect(await run('glob', { pattern: '**/*.ts' })).toEqual({ code: 'ok', text: 'src/deep/util.ts\nsrc/main.ts' })
    expect(await run('glob', { pattern: '*.ts', path: 'src' })).toEqual({ code: 'ok', text: 'src/main.ts' })
    expect(await run('glob', { pattern: '*.{md,ts}' })).toEqual({ code: 'ok', text: 'README.md' })
    expect(await run('glob', { pattern: 'src/[dm]*/**' })).toEqual({ code: 'ok', text: 'src/deep/util.ts' })
    expect(await run('glob', { pattern: 'src/m?in.ts' })).toEqual({ code: 'ok', text: 'src/main.ts' })
    expect(await run('glob', { pattern: './README.md' })).toEqual({ code: 'ok', text: 'README.md' })
    expect(await run('glob', { pattern: '*.rs', path: 'src' })).toEqual({ code: 'ok', text: 'No files match "*.rs" under src.' })
  })

  it('honours .gitignore at every level, .git/info/exclude and negations; never enters .git or node_modules', async () => {
    const root = repository()
    const { run } = await mount(root)
    expect((await run('glob', { pattern: '**' })).text.split('\n')).toEqual([
      '.gitignore',
      'docs/a/final.md',
      'nested/top-only.txt',
      'src/.gitignore',
      'src/important.log',
      'src/index.ts',
      'src/keep.log',
    ])
  })

  it('searches an ignored directory when asked for it by path', async () => {
    const root = repository()
    const { run } = await mount(root)
    expect(await run('glob', { pattern: '*', path: 'dist' })).toEqual({ code: 'ok', text: 'dist/bundle.js' })
    expect(await run('glob', { pattern: '**', path: 'node_modules' })).toEqual({ code: 'ok', text: 'node_modules/dep/index.js' })
  })

  it('can be told to ignore nothing', async () => {
    const root = repository()
    const { run } = await mount(root, { gitignore: false, skipDirectories: ['.git'] })
    expect((await run('glob', { pattern: '**/*.log' })).text).toBe('src/app.log\nsrc/important.log\nsrc/keep.log')
  })

  it('caps the paths, and the entries a walk looks at, each with a note', async () => {
    const root = tempDir()
    writeTree(root, Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, ''])))
    const capped = await mount(root, { limits: { maxResults: 2 } })
    expect(await capped.run('glob', { pattern: '*.txt' })).toEqual({ code: 'ok', text: 'f0.txt\nf1.txt\n[stopped after 2 paths; narrow the pattern or the path]' })
    const walked = await mount(root, { limits: { maxWalkEntries: 3 } })
    expect(await walked.run('glob', { pattern: '*.txt' })).toEqual({
      code: 'ok',
      text: 'f0.txt\nf1.txt\nf2.txt\n[the search stopped after looking at 3 entries; narrow the path]',
    })
  })

  it('refuses a file as the directory, and an invalid class', async () => {
    const { root } = sandboxTree()
    const { run } = await mount(root)
    expect(await run('glob', { pattern: '*', path: 'README.md' })).toEqual({
      code: 'NOT_A_DIRECTORY',
      text: 'Error: README.md is a file, not a directory; glob searches a directory',
    })
    expect(await run('glob', { pattern: '[z-a]' })).toEqual({
      code: 'INVALID_PATTERN',
      text: 'Error: the glob "[z-a]" is not valid (invalid character class range: `\\x{7a}-\\x{61}`)',
    })
  })
})

describe('grep', () => {
  it('finds matching lines as "path:line: text", skipping ignored and binary files, never following symlinks', async () => {
    const { root } = sandboxTree()
    writeTree(root, { 'src/blob.bin': Buffer.from('TODO\u0000binary') })
    const { run } = await mount(root)
    expect(await run('grep', { pattern: 'TODO' })).toEqual({
      code: 'ok',
      text: 'src/deep/util.ts:1: export const TODO = true\nsrc/main.ts:2: // TODO: more',
    })
    expect(await run('grep', { pattern: 'answer\\s=', path: 'src' })).toEqual({ code: 'ok', text: 'src/main.ts:1: export const answer = 42' })
    expect(await run('grep', { pattern: 'answer', path: 'src/main.ts' })).toEqual({ code: 'ok', text: 'src/main.ts:1: export const answer = 42' })
    expect(await run('grep', { pattern: 'no such text' })).toEqual({ code: 'ok', text: 'No matches for "no such text".' })
  })

  it('filters by glob (a name at any depth, or a path), ignores case on request, and reports files or counts', async () => {
    const root = repository()
    const { run } = await mount(root)
    expect(await run('grep', { pattern: 'todo', ignore_case: true, glob: '*.log' })).toEqual({
      code: 'ok',
      text: 'src/important.log:1: TODO important\nsrc/keep.log:1: TODO kept',
    })
    expect(await run('grep', { pattern: '(?i)todo', glob: 'docs/**/*.md', output: 'files' })).toEqual({ code: 'ok', text: 'docs/a/final.md' })
    writeTree(root, { 'src/twice.ts': 'TODO one\nTODO two\n' })
    expect(await run('grep', { pattern: 'TODO', path: 'src', output: 'count' })).toEqual({
      code: 'ok',
      text: 'src/important.log: 1\nsrc/index.ts: 1\nsrc/keep.log: 1\nsrc/twice.ts: 2',
    })
  })

  it('is immune to catastrophic patterns: the classic exponential ones come back with a result', async () => {
    const root = tempDir()
    writeTree(root, { 'evil.txt': `${'a'.repeat(50_000)}!\n${'x'.repeat(30_000)}\n` })
    const { run } = await mount(root)
    expect(await run('grep', { pattern: '^(a+)+$' })).toEqual({ code: 'ok', text: 'No matches for "^(a+)+$".' })
    expect(await run('grep', { pattern: '(x+x+)+y' })).toEqual({ code: 'ok', text: 'No matches for "(x+x+)+y".' })
    expect(await run('grep', { pattern: '(a|aa)+!', output: 'count' })).toEqual({ code: 'ok', text: 'evil.txt: 1' })
    // A glob with many stars, compiled for a backtracking engine, would be exponential on a long name too.
    writeTree(root, { [`${'a'.repeat(200)}.txt`]: '' })
    expect(await run('glob', { pattern: '*a*a*a*a*a*a*a*a*a*a*a*a*a*b' })).toEqual({ code: 'ok', text: 'No files match "*a*a*a*a*a*a*a*a*a*a*a*a*a*b".' })
  })

  it('anchors match at each line, in LF and CRLF files alike, whatever the pattern', async () => {
    const root = tempDir()
    writeTree(root, { 'unix.txt': 'alpha end\nbeta\n', 'dos.txt': 'gamma end\r\ndelta\r\n' })
    const { run } = await mount(root)
    expect(await run('grep', { pattern: 'end$' })).toEqual({ code: 'ok', text: 'dos.txt:1: gamma end\nunix.txt:1: alpha end' })
    expect(await run('grep', { pattern: '^(beta|delta)$' })).toEqual({ code: 'ok', text: 'dos.txt:2: delta\nunix.txt:2: beta' })
    expect(await run('grep', { pattern: '\\Abeta\\z' })).toEqual({ code: 'ok', text: 'unix.txt:2: beta' })
    expect(await run('grep', { pattern: '(?i-m)^DELTA$' })).toEqual({ code: 'ok', text: 'dos.txt:2: delta' })
  })

  it('refuses what RE2 cannot do, saying which syntax it speaks', async () => {
    const root = tempDir()
    const { run } = await mount(root)
    expect(await run('grep', { pattern: '(a)\\1' })).toEqual({
      code: 'INVALID_PATTERN',
      text: 'Error: the pattern "(a)\\\\1" is not valid RE2 (invalid escape sequence: `\\1`); grep uses RE2 syntax as ripgrep does: no backreferences or lookaround',
    })
    expect((await run('grep', { pattern: '(' })).code).toBe('INVALID_PATTERN')
  })

  it('shows a long line around its match, caps the results, and notes files too large to search', async () => {
    const root = tempDir()
    writeTree(root, {
      'long.txt': `${'x'.repeat(500)}NEEDLE${'y'.repeat(500)}\n`,
      'many.txt': 'hit\n'.repeat(10),
      'huge.txt': `hit ${'z'.repeat(3000)}\n`,
    })
    const { run } = await mount(root, { limits: { maxResults: 3, maxGrepFileBytes: 2048 } })
    const long = await run('grep', { pattern: 'NEEDLE', path: 'long.txt' })
    expect(long).toEqual({ code: 'ok', text: `long.txt:1: …${'x'.repeat(100)}NEEDLE${'y'.repeat(194)}…` })
    expect(await run('grep', { pattern: 'hit' })).toEqual({
      code: 'ok',
      text: 'many.txt:1: hit\nmany.txt:2: hit\nmany.txt:3: hit\n[stopped after 3 results; narrow the pattern, the path or the glob]\n[1 file over 2 KiB not searched]',
    })
  })
})
