import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { onlySession, runDemo, sessionFiles, tempDir, trace, workspace } from './helpers'
import { KEY, startPty } from './pty'
import { HELP_DETAILS } from '../src/cli/help-text'
import { HELP as HELP_LINES } from '../src/cli/interactive/commands'

const HELLO_ANSWER =
  'I am the offline demo model (no network, no API key). You said: "hello". Ask me about the files in this workspace and I will look with the tools.'
const SUMMARY = (turn: number, end = 'done') =>
  expect.stringMatching(new RegExp(`^· turn ${turn} ${end} · ([\\d,]+ tokens in \\(cache hits not reported\\) · \\d+ out|no token usage reported)`))
// The greeting's two lines of help (other parts of the CLI add their commands to it).
const HELP = HELP_LINES.split('\n')

/** The greeting of a fresh session in `cwd`, saving to `data`. */
function greeting(id: string, cwd: string, data: string): string[] {
  return ['dsh demo · offline scripted model (scripted/demo)', `session ${id} · workspace ${cwd} · saved in ${data} · mode default`, ...HELP]
}

// Each test drives a real `dsh-demo` in a pseudo-terminal (300 columns, so no line of these screens wraps)
// and compares the screen a headless xterm shows, colors aside.
describe.concurrent('dsh-demo on a terminal', { timeout: 240_000 }, () => {
  it('renders the answer as markdown, keeps a multi-line message, recalls earlier messages, and prices the turn', async () => {
    const cwd = workspace()
    const data = tempDir()
    const answer = '# Plan\n\nRead **README.md** first, then `src/add.ts`:\n\n```ts\nconst x = 1 // one\n```\n\n- [x] list\n- read\n\n| file | lines |\n|:--|--:|\n| README.md | 3 |'
    writeFileSync(
      join(cwd, 'dsh.config.json'),
      JSON.stringify({ scripted: { script: [answer, 'Two lines, noted.'] }, prices: { 'scripted/demo': { input: 1000, output: 2000 } } }),
    )
    const demo = startPty(['--data-dir', data], { cwd, columns: 300 })
    await demo.waitFor(/^> $/m)
    demo.type(`hello${KEY.enter}`)
    await demo.waitFor(/· turn 1 done/)
    demo.type(`first line\\${KEY.enter}second line${KEY.enter}`)
    await demo.waitFor(/· turn 2 done/)
    demo.type(KEY.up)
    await demo.waitFor(/^> first line\n {2}second line$/m, 2)
    // Up walks the lines of the recalled message, then the history.
    demo.type(KEY.up + KEY.up)
    await demo.waitFor(/^> hello$/m, 2)
    demo.type(`\x01\x0b/help${KEY.enter}`)
    await demo.waitFor(/^ {2}\/exit +quit$/m)
    demo.type(`/exit${KEY.enter}`)
    expect(await demo.exited).toBe(0)
    const { id, events } = onlySession(data)
    const cost = (turn: number) => expect.stringMatching(new RegExp(`^· turn ${turn} done · .* · \\d+ out · \\$[\\d.]+ \\(session \\$[\\d.]+\\)$`))
    expect(await demo.screen()).toEqual([
      ...greeting(id, cwd, data),
      '> hello',
      'Plan',
      '',
      'Read README.md first, then src/add.ts:',
      '',
      '╭─ ts',
      '│ const x = 1 // one',
      '╰─',
      '',
      '• ☑ list',
      '• read',
      '',
      'file      │ lines',
      '──────────┼──────',
      'README.md │     3',
      cost(1),
      '> first line',
      '  second line',
      'Two lines, noted.',
      cost(2),
      // The recalled line was cleared (Ctrl-A, Ctrl-K) and /help typed instead.
      '> /help',
      ...HELP_DETAILS,
      '> /exit',
    ])
    // The line kept its newline; the history and the screen never reached the log.
    expect(events.filter((event) => event.type === 'user/message').map((event) => (event.data as unknown as { message: { content: { text: string }[] } }).message.content[0]!.text)).toEqual([
      'hello',
      'first line\nsecond line',
    ])
  })

  it('keeps what is typed on its own line while the answer streams, then steers with it', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startPty(['--data-dir', data, '--chunk-delay-ms', '80'], { cwd, columns: 300 })
    await demo.waitFor(/^> $/m)
    demo.type(`hello${KEY.enter}`)
    await demo.waitFor(/I am the offline/)
    demo.type('also say goodbye')
    await demo.waitFor(/^> also say goodbye$/m)
    // The answer goes on above the prompt line, whose text stays whole.
    const screen = await demo.screen()
    expect(screen.at(-1)).toBe('> also say goodbye')
    expect(screen.at(-2)).toMatch(/^I am the offline/)
    demo.type(KEY.enter)
    await demo.waitFor(/· turn 1 done/)
    demo.type(`/exit${KEY.enter}`)
    expect(await demo.exited).toBe(0)
    const { id } = onlySession(data)
    expect(await demo.screen()).toEqual([
      ...greeting(id, cwd, data),
      '> hello',
      HELLO_ANSWER,
      // Entered while the answer's line was open: it follows that line.
      '> also say goodbye',
      '↪ steering: also say goodbye',
      'I am the offline demo model (no network, no API key). You said: "also say goodbye". Ask me about the files in this workspace and I will look with the tools.',
      SUMMARY(1),
      '> /exit',
    ])
  })

  it('cancels the turn on Ctrl-C, and exits 130 on two', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startPty(['--data-dir', data, '--chunk-delay-ms', '80'], { cwd, columns: 300 })
    await demo.waitFor(/^> $/m)
    demo.type(`hello${KEY.enter}`)
    await demo.waitFor(/I am the offline/)
    // Ctrl-C on a line with text clears the line; the turn goes on.
    demo.type('oops')
    await demo.waitFor(/^> oops$/m)
    demo.type(KEY.ctrlC)
    await demo.waitFor(/^> $/m)
    demo.type(KEY.ctrlC)
    await demo.waitFor(/· turn 1 cancelled/)
    demo.type(`hello${KEY.enter}`)
    await demo.waitFor(/I am the offline/, 2)
    demo.type(KEY.ctrlC + KEY.ctrlC)
    expect(await demo.exited).toBe(130)
    const { id, events } = onlySession(data)
    const screen = await demo.screen()
    expect(screen.slice(0, 5)).toEqual([...greeting(id, cwd, data), '> hello'])
    expect(screen.slice(5)).toEqual([
      expect.stringMatching(/^I am the offline/),
      '^C cancelling the turn (press Ctrl-C again to exit)',
      SUMMARY(1, 'cancelled'),
      '> hello',
      expect.stringMatching(/^I am the offline/),
      '^C cancelling the turn (press Ctrl-C again to exit)',
      // The second Ctrl-C exits, closing the turn first.
      SUMMARY(2, 'cancelled'),
    ])
    expect(trace(events).filter((line) => line.startsWith('turn/end'))).toEqual(['turn/end 1 aborted', 'turn/end 2 aborted'])
  })

  it('switches the model with /model (a new request header), attaches @files, and shows the cost per model', async () => {
    const cwd = workspace()
    const data = tempDir()
    writeFileSync(
      join(cwd, 'dsh.config.json'),
      JSON.stringify({
        scripted: { models: [{ id: 'demo' }, { id: 'demo-large' }], script: ['Hello.', 'I read add.ts.'] },
        prices: { 'scripted/demo': { input: 1, output: 2 }, 'scripted/demo-large': { input: 10, cacheRead: 1, output: 20 } },
      }),
    )
    const demo = startPty(['--data-dir', data], { cwd, columns: 300 })
    await demo.waitFor(/^> $/m)
    demo.type(`hello${KEY.enter}`)
    await demo.waitFor(/· turn 1 done/)
    demo.type(`/model${KEY.enter}`)
    await demo.waitFor(/^ {2}scripted\/demo-large/m)
    demo.type(`/model demo-large${KEY.enter}`)
    await demo.waitFor(/^model scripted\/demo → scripted\/demo-large/m)
    demo.type(`hi @src/add.ts and @missing.ts${KEY.enter}`)
    await demo.waitFor(/· turn 2 done/)
    demo.type(`/cost${KEY.enter}`)
    await demo.waitFor(/^session total/m)
    demo.type(`/exit${KEY.enter}`)
    expect(await demo.exited).toBe(0)
    const { id, events } = onlySession(data)
    const screen = await demo.screen()
    const from = screen.indexOf('> /model')
    expect(screen.slice(from)).toEqual([
      '> /model',
      'model scripted/demo ($1 in · $2 out per M tokens)',
      'models (/model <provider>/<model>, or any model id of a provider):',
      '* scripted/demo ($1 in · $2 out per M tokens)',
      '  scripted/demo-large ($10 in · $1 cache read · $20 out per M tokens)',
      ...screen.slice(from + 5, screen.indexOf('> /model demo-large')),
      '> /model demo-large',
      "model scripted/demo → scripted/demo-large ($10 in · $1 cache read · $20 out per M tokens): from the next request on (logged as a new request header; the provider's prompt cache starts over)",
      '> hi @src/add.ts and @missing.ts',
      '! @missing.ts: no such file in the workspace (sent as text)',
      '· attached src/add.ts',
      'I read add.ts.',
      expect.stringMatching(/^· turn 2 done · .* · \$[\d.]+ \(session \$[\d.]+\)$/),
      '> /cost',
      expect.stringMatching(/^scripted\/demo: 1 call · [\d,]+ in · 0 cache read · 0 cache write · [\d,]+ out · \$0\.\d+$/),
      expect.stringMatching(/^scripted\/demo-large: 1 call · [\d,]+ in · 0 cache read · 0 cache write · [\d,]+ out · \$0\.\d+$/),
      expect.stringMatching(/^session total \$0\.\d+$/),
      '> /exit',
    ])
    // The switch is in the log as a request header; the file went to the model, the prompt stayed as typed.
    const headers = events.filter((event) => event.type === 'request/header').map((event) => event.data as { model: string; reason: string })
    expect(headers.map((header) => [header.model, header.reason])).toEqual([
      ['demo', 'initial'],
      ['demo-large', 'change'],
    ])
    const prompt = events.filter((event) => event.type === 'user/message').at(-1)!.data as unknown as {
      message: { content: { text: string }[] }
      envelope: { display: { text: string }[]; contexts: { label: string }[] }
    }
    expect(prompt.envelope).toEqual({ display: [{ type: 'text', text: 'hi @src/add.ts and @missing.ts' }], contexts: [{ label: 'file: src/add.ts' }] })
    expect(prompt.message.content.map((block) => block.text)).toEqual([
      '<file path="src/add.ts">\nexport const add = (a: number, b: number) => a + b\n</file>',
      expect.any(String),
      'hi @src/add.ts and @missing.ts',
    ])
  })

  it('compacts on /compact and says so on the screen', async () => {
    const cwd = workspace()
    const data = tempDir()
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { models: [{ id: 'demo', contextWindow: 6_000, maxOutputTokens: 200 }] } }))
    const demo = startPty(['--data-dir', data], { cwd, columns: 300 })
    await demo.waitFor(/^> $/m)
    // Each note is pasted (the terminal marks a paste): its newline stays in the message.
    for (let i = 1; i <= 4; i++) {
      demo.type(`${KEY.pasteStart}note ${i}:\n${'zz '.repeat(600)}${KEY.pasteEnd}${KEY.enter}`)
      await demo.waitFor(new RegExp(`· turn ${i} done`))
    }
    demo.type(`/compact keep the numbers${KEY.enter}`)
    await demo.waitFor(/^· compacted/m)
    demo.type(`/exit${KEY.enter}`)
    expect(await demo.exited).toBe(0)
    const screen = await demo.screen()
    expect(screen.slice(screen.indexOf('> /compact keep the numbers'))).toEqual([
      '> /compact keep the numbers',
      expect.stringMatching(/^· compacted \(manual\): summarized the older history, about [\d,]+ → [\d,]+ tokens · requested by compact\(\) with instructions$/),
      '> /exit',
    ])
  })

  it('shows the last turns when it resumes a session, and its prompts are in the history', async () => {
    const cwd = workspace()
    const data = tempDir()
    const first = await runDemo(['-p', 'hello', '--data-dir', data], { cwd })
    expect(first.status).toBe(0)
    const { id } = onlySession(data)
    const demo = startPty(['--data-dir', data, '--resume', id], { cwd, columns: 300 })
    await demo.waitFor(/^> $/m)
    demo.type(KEY.up)
    await demo.waitFor(/^> hello$/m, 2)
    demo.type(`${KEY.enter}`)
    await demo.waitFor(/· turn 2 done/)
    demo.type(KEY.ctrlD)
    expect(await demo.exited).toBe(0)
    expect(await demo.screen()).toEqual([
      'dsh demo · offline scripted model (scripted/demo)',
      `session ${id} (resumed, 1 turn so far) · workspace ${cwd} · saved in ${data} · mode default`,
      '(1 turn)',
      '> hello',
      // On a terminal the last answer is shown in full, rendered.
      HELLO_ANSWER,
      ...HELP,
      '> hello',
      HELLO_ANSWER,
      SUMMARY(2),
    ])
  })

  it('recalls what was entered in earlier runs with Up, from the prompt history beside the sessions', async () => {
    const cwd = workspace()
    const data = tempDir()
    const first = startPty(['--data-dir', data], { cwd, columns: 300 })
    await first.waitFor(/^> $/m)
    first.type(`hello${KEY.enter}`)
    await first.waitFor(/· turn 1 done/)
    first.type(`/exit${KEY.enter}`)
    expect(await first.exited).toBe(0)
    // A new session (not a resume): its log holds nothing, the history file does.
    const second = startPty(['--data-dir', data], { cwd, columns: 300 })
    await second.waitFor(/^> $/m)
    second.type(KEY.up)
    await second.waitFor(/^> \/exit$/m)
    second.type(KEY.up)
    await second.waitFor(/^> hello$/m)
    second.type(`\x01\x0b/exit${KEY.enter}`)
    expect(await second.exited).toBe(0)
    // One JSON string per entry; the second /exit repeats the last entry and is not written again.
    expect(readFileSync(join(data, 'prompt-history'), 'utf8')).toBe('"hello"\n"/exit"\n')
    // The second run sent nothing, so it saved no session: the history is not a session's log.
    expect(Object.keys(sessionFiles(data))).toHaveLength(1)
  })

  it('draws no colors with NO_COLOR, and the markdown keeps its layout', async () => {
    const cwd = workspace()
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script: ['**bold** and `code`\n\n```sh\necho hi\n```'] } }))
    const demo = startPty(['--data-dir', tempDir()], { cwd, columns: 300, env: { NO_COLOR: '1' } })
    await demo.waitFor(/^> $/m)
    demo.type(`hello${KEY.enter}`)
    await demo.waitFor(/· turn 1 done/)
    demo.type(`/exit${KEY.enter}`)
    expect(await demo.exited).toBe(0)
    const screen = await demo.screen()
    expect(screen.slice(screen.indexOf('> hello'), -1)).toEqual(['> hello', 'bold and code', '', '╭─ sh', '│ echo hi', '╰─', SUMMARY(1)])
    // Cursor movement and erasing, but no color or attribute (SGR) sequence anywhere.
    expect(demo.raw()).not.toMatch(/\x1b\[[\d;]*m/)
  })

  it('asks on the prompt line when a tool wants to write, and the answer is kept on screen', async () => {
    const cwd = workspace()
    const script = [{ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hello' } }], answer: 'Noted.' }]
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script } }))
    const demo = startPty(['--data-dir', tempDir()], { cwd, columns: 300 })
    await demo.waitFor(/^> $/m)
    demo.type(`take a note${KEY.enter}`)
    await demo.waitFor(/^\? allow write_file: write 5 bytes to notes\.txt\? \[y\]es \/ \[n\]o \/ \[a\]lways \(write_file on notes\.txt\) $/m)
    demo.type(`y${KEY.enter}`)
    await demo.waitFor(/· turn 1 done/)
    demo.type(`/exit${KEY.enter}`)
    expect(await demo.exited).toBe(0)
    const screen = await demo.screen()
    expect(screen.slice(screen.indexOf('> take a note'))).toEqual([
      '> take a note',
      '▸ write_file {"path":"notes.txt","content":"hello"}',
      '? allow write_file: write 5 bytes to notes.txt? [y]es / [n]o / [a]lways (write_file on notes.txt) y',
      '  ◂ Wrote 5 bytes to notes.txt',
      'Noted.',
      SUMMARY(1),
      '> /exit',
    ])
  })

  it('draws no screen on a terminal that cannot move its cursor (TERM=dumb): Node reads the lines, the answer is shown as it came', async () => {
    const cwd = workspace()
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script: ['**bold** and `code`'] } }))
    const demo = startPty(['--data-dir', tempDir()], { cwd, columns: 300, env: { TERM: 'dumb' } })
    await demo.waitFor(/^> $/m)
    demo.type(`hello${KEY.enter}`)
    await demo.waitFor(/· turn 1 done/)
    await demo.waitFor(/^> $/m)
    demo.type(KEY.ctrlD)
    expect(await demo.exited).toBe(0)
    const screen = await demo.screen()
    expect(screen.slice(screen.indexOf('> hello'))).toEqual(['> hello', '**bold** and `code`', SUMMARY(1), '> '])
    expect(demo.raw()).not.toMatch(/\x1b\[\d*[AJG]/)
  })
})
