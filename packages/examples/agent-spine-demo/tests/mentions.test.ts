import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MENTION_MAX_CHARS, expandMentions } from '../src/cli/mentions'
import { tempDir, workspace } from './helpers'

describe('expandMentions', () => {
  it('attaches each mentioned file once, before the prompt, keeping the prompt as typed', () => {
    const cwd = workspace()
    expect(expandMentions('compare @src/add.ts with @README.md, then @src/add.ts again', cwd)).toEqual({
      input: {
        content: 'compare @src/add.ts with @README.md, then @src/add.ts again',
        contexts: [
          { label: 'file: src/add.ts', content: [{ type: 'text', text: '<file path="src/add.ts">\nexport const add = (a: number, b: number) => a + b\n</file>' }] },
          { label: 'file: README.md', content: [{ type: 'text', text: '<file path="README.md">\n# Tiny project\n\nIt adds numbers.\n</file>' }] },
        ],
        placement: 'prompt-prefix',
      },
      attached: ['src/add.ts', 'README.md'],
      notes: [],
    })
  })

  it('lists a directory, and quotes a path with spaces', () => {
    const cwd = workspace()
    mkdirSync(join(cwd, 'my docs'))
    writeFileSync(join(cwd, 'my docs', 'a b.txt'), 'spaced\n')
    const { input, attached } = expandMentions('see @src and @"my docs/a b.txt"', cwd)
    expect(attached).toEqual(['src', 'my docs/a b.txt'])
    expect(input).toMatchObject({ contexts: [{ content: [{ text: '<directory path="src">\nadd.ts\n</directory>' }] }, { content: [{ text: '<file path="my docs/a b.txt">\nspaced\n</file>' }] }] })
  })

  it('leaves as text, with a note, what names nothing, leaves the workspace or is binary; an e-mail address is no mention', () => {
    const cwd = workspace()
    const outside = tempDir()
    writeFileSync(join(outside, 'secret.txt'), 'no')
    symlinkSync(join(outside, 'secret.txt'), join(cwd, 'link.txt'))
    writeFileSync(join(cwd, 'blob.bin'), Buffer.from([1, 0, 2]))
    const escape = `@../${basename(outside)}/secret.txt`
    expect(expandMentions(`mail me@host.dev about @nope.ts ${escape} @link.txt @blob.bin`, cwd)).toEqual({
      input: `mail me@host.dev about @nope.ts ${escape} @link.txt @blob.bin`,
      attached: [],
      notes: [
        '@nope.ts: no such file in the workspace (sent as text)',
        `${escape}: outside the workspace (sent as text)`,
        '@link.txt: outside the workspace (sent as text)',
        '@blob.bin: blob.bin is not a text file (sent as text)',
      ],
    })
  })

  it('cuts a large file at the limit and says so', () => {
    const cwd = workspace()
    writeFileSync(join(cwd, 'big.txt'), 'x'.repeat(MENTION_MAX_CHARS + 10))
    const { input } = expandMentions('@big.txt', cwd)
    const text = (input as unknown as { contexts: { content: { text: string }[] }[] }).contexts[0]!.content[0]!.text
    expect(text.endsWith(`${'x'.repeat(20)}\n[cut: the file has 60,010 bytes; read_file reads the rest]\n</file>`)).toBe(true)
    expect(text.length).toBe('<file path="big.txt">\n'.length + MENTION_MAX_CHARS + '\n[cut: the file has 60,010 bytes; read_file reads the rest]\n</file>'.length)
  })
})
