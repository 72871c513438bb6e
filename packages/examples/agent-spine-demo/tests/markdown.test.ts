import { describe, expect, it } from 'vitest'
import { highlightLine } from '../src/cli/render/highlight'
import { MarkdownRenderer } from '../src/cli/render/markdown'
import { rowsOf, visibleWidth } from '../src/cli/render/width'
import type { Style } from '../src/cli/style'

/** A style that shows what it applied: `<bold>x</bold>`. */
const tags: Style = (format, text) => {
  const names = Array.isArray(format) ? format : [format]
  return names.reduceRight((inner, name) => `<${name}>${inner}</${name}>`, text)
}
const plain: Style = (_format, text) => text

function render(text: string, style: Style = tags, columns = 80): string[] {
  const renderer = new MarkdownRenderer({ style, columns: () => columns })
  return [...renderer.push(text), ...renderer.end()]
}

describe('MarkdownRenderer', () => {
  it('renders headings, emphasis, code spans, links, lists, tasks, quotes and rules', () => {
    expect(
      render(
        [
          '# Title',
          '### Small',
          'Some **bold**, *italic*, ~~gone~~ and `a < b` with [docs](https://x.dev) &amp; <https://y.dev>.',
          '- one',
          '  * nested',
          '3. third',
          '- [ ] todo',
          '- [x] done',
          '> quoted **text**',
          '---',
          '',
          'a \\*literal\\* star',
        ].join('\n'),
      ),
    ).toEqual([
      '<bold><underline>Title</underline></bold>',
      '<bold>Small</bold>',
      'Some <bold>bold</bold>, <italic>italic</italic>, <strikethrough>gone</strikethrough> and <cyan>a < b</cyan> with <underline>docs</underline><dim> (https://x.dev)</dim> & <underline>https://y.dev</underline>.',
      '• one',
      '  • nested',
      '3. third',
      '• ☐ todo',
      '• ☑ done',
      '<dim>│</dim> <italic>quoted <bold>text</bold></italic>',
      `<dim>${'─'.repeat(40)}</dim>`,
      '',
      'a *literal* star',
    ])
  })

  it('frames and highlights a fenced code block, leaving markdown inside it alone', () => {
    expect(render('Run:\n```ts\nconst x = 1 // **no**\n```\ndone\n')).toEqual([
      'Run:',
      '<dim>╭─ ts</dim>',
      '<dim>│</dim> <magenta>const</magenta> x = <yellow>1</yellow> <gray>// **no**</gray>',
      '<dim>╰─</dim>',
      'done',
    ])
  })

  it('keeps the text of a language it has no grammar for, and closes a fence the answer left open', () => {
    expect(render('~~~~brainfart\n*x*\n~~~\nstill code')).toEqual(['<dim>╭─ brainfart</dim>', '<dim>│</dim> *x*', '<dim>│</dim> ~~~', '<dim>│</dim> still code', '<dim>╰─</dim>'])
  })

  it('aligns a table once its last row has arrived', () => {
    expect(render('| name | size |\n|:--|--:|\n| a.ts | 12 |\n| **long.ts** | 3 |\nafter', plain)).toEqual([
      'name    │ size',
      '────────┼─────',
      'a.ts    │   12',
      'long.ts │    3',
      'after',
    ])
  })

  it('streams: a line is rendered once its newline arrives, whatever the chunking', () => {
    const text = '## Plan\n1. read **README.md**\n```sh\nls -la\n```\nok'
    const whole = render(text)
    for (const size of [1, 2, 3, 7]) {
      const renderer = new MarkdownRenderer({ style: tags, columns: () => 80 })
      const lines: string[] = []
      for (let i = 0; i < text.length; i += size) lines.push(...renderer.push(text.slice(i, i + size)))
      expect(renderer.pending()).toBe('ok')
      expect([...lines, ...renderer.end()]).toEqual(whole)
    }
  })

  it('without colors keeps the layout and drops the markup', () => {
    expect(render('# Hi\n**bold** and `code`\n```js\nlet a\n```', plain)).toEqual(['Hi', 'bold and code', '╭─ js', '│ let a', '╰─'])
  })
})

describe('highlightLine', () => {
  it('knows the usual fence labels', () => {
    expect(highlightLine('def f(): return "x"', 'Python', tags)).toBe('<magenta>def</magenta> <blue>f</blue>(): <magenta>return</magenta> <green>"x"</green>')
    expect(highlightLine('echo "hi"', 'sh', tags)).toContain('<green>"hi"</green>')
    expect(highlightLine('plain words', 'nope', tags)).toBe('plain words')
  })
})

describe('visibleWidth', () => {
  it('counts columns: escapes none, CJK and emoji two', () => {
    expect([visibleWidth('\x1b[1mab\x1b[22m'), visibleWidth('中文'), visibleWidth('é'), visibleWidth('👍'), visibleWidth('e\u0301')]).toEqual([2, 4, 1, 2, 1])
    expect([rowsOf('', 10), rowsOf('x'.repeat(10), 10), rowsOf('x'.repeat(11), 10)]).toEqual([1, 1, 2])
  })
})
