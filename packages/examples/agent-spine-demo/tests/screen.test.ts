import { Terminal } from '@xterm/headless'
import { describe, expect, it } from 'vitest'
import { LineEditor } from '../src/cli/interactive/line-editor'
import { Screen } from '../src/cli/interactive/screen'
import type { Style } from '../src/cli/style'

const plain: Style = (_format, text) => text

/** A screen drawing on a headless xterm of `columns` × `rows`. */
function terminal(columns = 40, rows = 12) {
  const term = new Terminal({ cols: columns, rows, allowProposedApi: true })
  let pending = Promise.resolve()
  const stream = {
    columns,
    write(text: string) {
      pending = pending.then(() => new Promise<void>((resolve) => term.write(text, resolve)))
    },
  }
  const screen = new Screen(stream, plain)
  return {
    screen,
    /** The whole screen, trailing blank lines dropped, and the cursor. */
    async show() {
      await pending
      const buffer = term.buffer.active
      const lines: string[] = []
      for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)!.translateToString(true))
      while (lines.length && lines.at(-1) === '') lines.pop()
      return { lines, cursor: [buffer.cursorY + buffer.viewportY, buffer.cursorX] }
    },
  }
}

describe('Screen', () => {
  it('streams the answer above the prompt line; what the person types stays on its own line', async () => {
    const { screen, show } = terminal()
    const editor = new LineEditor()
    screen.showEditor({ prompt: '> ', text: '', cursor: 0 })
    screen.answer.write('The answer **starts**')
    for (const char of 'also') {
      editor.key(char)
      screen.showEditor({ prompt: '> ', text: editor.text, cursor: editor.cursor })
    }
    screen.answer.write(' here\nand a `second` line')
    screen.plain.line('▸ read_file {"path":"a.ts"}')
    expect(await show()).toEqual({
      lines: ['The answer starts here', 'and a second line', '▸ read_file {"path":"a.ts"}', '> also'],
      cursor: [3, 6],
    })
    screen.commitEditor()
    screen.showEditor({ prompt: '> ', text: '', cursor: 0 })
    screen.answer.write('# Done\n')
    screen.answer.newline()
    expect(await show()).toEqual({
      lines: ['The answer starts here', 'and a second line', '▸ read_file {"path":"a.ts"}', '> also', 'Done', '> '],
      cursor: [5, 2],
    })
  })

  it('keeps a wrapped open line, a status and a multi-line prompt in place while they change', async () => {
    const { screen, show } = terminal(10, 12)
    screen.showEditor({ prompt: '> ', text: 'one\ntwo', cursor: 7 })
    screen.plain.write('0123456789abcde')
    screen.setStatus('⠋ wait')
    screen.plain.write('fgh')
    expect(await show()).toEqual({ lines: ['0123456789', 'abcdefgh', '⠋ wait', '> one', '  two'], cursor: [4, 5] })
    screen.setStatus(undefined)
    screen.plain.write('\n')
    screen.showEditor({ prompt: '> ', text: '12345678', cursor: 8 })
    expect(await show()).toEqual({ lines: ['0123456789', 'abcdefgh', '> 12345678'], cursor: [3, 0] })
    screen.plain.line('next')
    screen.close()
    expect(await show()).toEqual({ lines: ['0123456789', 'abcdefgh', 'next'], cursor: [3, 0] })
  })
})

describe('LineEditor', () => {
  const type = (editor: LineEditor, text: string) => {
    for (const char of text) editor.key(char)
  }

  it('edits like a shell line and walks the history, keeping the draft', () => {
    const editor = new LineEditor(['first', 'second'])
    type(editor, 'hello world')
    editor.key(undefined, { name: 'w', ctrl: true })
    editor.key(undefined, { name: 'left' })
    editor.key(undefined, { name: 'backspace' })
    expect([editor.text, editor.cursor]).toEqual(['hell ', 4])
    editor.key(undefined, { name: 'up' })
    expect(editor.text).toBe('second')
    editor.key(undefined, { name: 'up' })
    editor.key(undefined, { name: 'up' })
    expect(editor.text).toBe('first')
    editor.key(undefined, { name: 'down' })
    editor.key(undefined, { name: 'down' })
    expect(editor.text).toBe('hell ')
    expect(editor.key('\r', { name: 'return' })).toBe('submit')
    expect(editor.take()).toBe('hell ')
    expect(editor.entries()).toEqual(['first', 'second', 'hell '])
    expect([editor.key(undefined, { name: 'd', ctrl: true }), editor.key(undefined, { name: 'c', ctrl: true })]).toEqual(['eof', 'interrupt'])
    // A resumed session's prompts become the most recent entries.
    editor.remember(['hell ', 'from the log', ' '])
    expect(editor.entries()).toEqual(['first', 'second', 'hell ', 'from the log'])
    editor.key(undefined, { name: 'up' })
    expect(editor.text).toBe('from the log')
  })

  it('continues a line ending in a backslash, on Alt-Enter and Ctrl-J, and keeps the newlines of a paste', () => {
    const editor = new LineEditor()
    type(editor, 'one\\')
    expect(editor.key('\r', { name: 'return' })).toBeUndefined()
    type(editor, 'two')
    editor.key('\r', { name: 'return', meta: true })
    editor.key('\n', { name: 'enter' })
    editor.key(undefined, { name: 'paste-start' })
    for (const [char, name] of [['a', 'a'], ['\r', 'return'], ['b', 'b']] as const) editor.key(char, { name })
    editor.key(undefined, { name: 'paste-end' })
    expect(editor.text).toBe('one\ntwo\n\na\nb')
    // Up moves between lines before it reaches the history.
    editor.key(undefined, { name: 'up' })
    expect(editor.cursor).toBe('one\ntwo\n\na'.length)
    expect(editor.key('\r', { name: 'return' })).toBe('submit')
    expect(editor.take()).toBe('one\ntwo\n\na\nb')
  })
})
