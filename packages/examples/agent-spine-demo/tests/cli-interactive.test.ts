import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { onlySession, sessionFiles, startDemo, tempDir, trace, workspace } from './helpers'

const HELLO_ANSWER =
  'I am the offline demo model (no network, no API key). You said: "hello". Ask me about the files in this workspace and I will look with the tools.'

// The model streams one word per chunk; with a delay per chunk a turn lasts long enough (about
// 30 words) for the test to act on it after seeing its first words on stdout.
const SLOW = ['--chunk-delay-ms', '60']

// Each test drives a real `dsh-demo` process over stdin; they run side by side.
describe.concurrent('dsh-demo interactive', { timeout: 240_000 }, () => {
  it('answers each line as a follow-up turn and exits 0 at the end of input', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startDemo(['--data-dir', data], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/^> /m, 2)
    demo.write('what is in this project?\n')
    await demo.waitFor(/^> /m, 3)
    demo.end()
    expect(await demo.exited).toBe(0)
    const { id, events } = onlySession(data)
    expect(demo.stdout().split('\n')).toEqual([
      'dsh demo · offline scripted model (scripted/demo)',
      `session ${id} · workspace ${cwd} · saved in ${data} · mode default`,
      'Enter sends a message · typing while the agent works steers it · Ctrl-C cancels the turn, twice exits',
      'Commands: /help · /model [provider/model] · /cost · /mode [default|accept-edits|plan] · /trust · /compact [instructions] · /sessions (list saved sessions) · /resume <id> · /new · /mcp (MCP servers) · /tasks [stop [id]] (background tasks) · /exit',
      '> ',
      HELLO_ANSWER,
      expect.stringMatching(/^· turn 1 done · [\d,]+ tokens in \(cache hits not reported\) · \d+ out$/),
      '> ',
      '▸ list_dir {"path":"."}',
      '  ◂ 3 lines',
      '▸ read_file {"path":"README.md"}',
      '  ◂ 3 lines',
      'The workspace has 3 entries (1 directory, 2 files): README.md, package.json, src/. README.md has 3 lines and starts with "# Tiny project".',
      expect.stringMatching(/^· turn 2 done · [\d,]+ tokens in \(cache hits not reported\) · \d+ out$/),
      '> ',
      '',
    ])
    expect(trace(events).filter((line) => line.startsWith('turn/'))).toEqual(['turn/start 1 prompt', 'turn/end 1 completed', 'turn/start 2 prompt', 'turn/end 2 completed'])
  })

  it('steers the running turn with a line typed while it runs', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startDemo(['--data-dir', data, ...SLOW], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/I am the offline/)
    demo.write('also say goodbye\n')
    await demo.waitFor(/· turn 1 done/)
    demo.end()
    expect(await demo.exited).toBe(0)
    expect(demo.stdout()).toContain(`${HELLO_ANSWER}\n↪ steering: also say goodbye\nI am the offline demo model (no network, no API key). You said: "also say goodbye".`)
    expect(trace(onlySession(data).events)).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "hello"',
      expect.stringMatching(/^assistant\/chunk ×\d+$/),
      'assistant/message stop',
      // The steering checkpoint of step 1 claims the line; the turn continues with it.
      'steering/message "also say goodbye"',
      'step/end 1.1',
      'step/start 1.2',
      expect.stringMatching(/^assistant\/chunk ×\d+$/),
      'assistant/message stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
  })

  it('cancels the running turn on Ctrl-C (a \\x03 byte on a pipe) and keeps going', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startDemo(['--data-dir', data, ...SLOW], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/I am the offline/)
    demo.write('\x03')
    await demo.waitFor(/· turn 1 cancelled/)
    demo.write('what is in this project?\n')
    await demo.waitFor(/· turn 2 done/)
    demo.end()
    expect(await demo.exited).toBe(0)
    expect(demo.stdout()).toContain('^C cancelling the turn (press Ctrl-C again to exit)\n· turn 1 cancelled')
    const lines = trace(onlySession(data).events)
    // The interrupted step keeps what streamed, marked interrupted; the history stays valid.
    expect(lines.slice(0, 7)).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "hello"',
      expect.stringMatching(/^assistant\/chunk ×\d+$/),
      'assistant/message aborted interrupted',
      'step/end 1.1',
      'turn/end 1 aborted',
    ])
    expect(lines.at(-1)).toBe('turn/end 2 completed')
  })

  it('cancels on SIGINT; a Ctrl-C when idle exits 0 and the session is saved', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startDemo(['--data-dir', data, ...SLOW], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/I am the offline/)
    demo.child.kill('SIGINT')
    await demo.waitFor(/· turn 1 cancelled/)
    await demo.waitFor(/^> /m, 2)
    demo.child.kill('SIGINT')
    expect(await demo.exited).toBe(0)
    expect(trace(onlySession(data).events).at(-1)).toBe('turn/end 1 aborted')
  })

  it('exits 130 on a second Ctrl-C while the turn is still running, closing the turn first', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startDemo(['--data-dir', data, ...SLOW], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/I am the offline/)
    demo.write('\x03\x03')
    expect(await demo.exited).toBe(130)
    expect(trace(onlySession(data).events).slice(-3)).toEqual(['assistant/message aborted interrupted', 'step/end 1.1', 'turn/end 1 aborted'])
  })

  it('lists, starts and resumes sessions (/sessions, /new, /resume, --resume)', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startDemo(['--data-dir', data], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/· turn 1 done/)
    const first = /^session (\S+) ·/m.exec(demo.stdout())![1]!
    demo.write('/new\n')
    await demo.waitFor(/^session \S+ ·/m, 2)
    const second = [...demo.stdout().matchAll(/^session (\S+) ·/gm)][1]![1]!
    demo.write('/sessions\n')
    await demo.waitFor(/saved sessions in/)
    await demo.waitFor(new RegExp(`^  ${first}  updated`, 'm'))
    expect(demo.stdout()).toMatch(new RegExp(`^\\* ${second}  updated .*  ${cwd}$`, 'm'))
    demo.write(`/resume ${first}\n`)
    await demo.waitFor(new RegExp(`^session ${first} \\(resumed, 1 turn so far\\)`, 'm'))
    demo.write('hello\n')
    await demo.waitFor(/· turn 2 done/)
    demo.write('/exit\n')
    expect(await demo.exited).toBe(0)
    const turns = (id: string) => trace(sessionFiles(data)[id]!).filter((line) => line.startsWith('turn/end'))
    expect(turns(first)).toEqual(['turn/end 1 completed', 'turn/end 2 completed'])
    // The session opened by /new and never used is not kept.
    expect(Object.keys(sessionFiles(data))).toEqual([first])

    // A new process continues the same session.
    const again = startDemo(['--data-dir', data, '--resume', first], { cwd })
    await again.waitFor(new RegExp(`^session ${first} \\(resumed, 2 turns so far\\)`, 'm'))
    again.write('hello\n')
    await again.waitFor(/· turn 3 done/)
    again.end()
    expect(await again.exited).toBe(0)
    expect(turns(first)).toEqual(['turn/end 1 completed', 'turn/end 2 completed', 'turn/end 3 completed'])
  })

  it('asks the person before write_file and writes once they answer y', async () => {
    const cwd = workspace()
    const script = [{ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hello' } }], answer: 'Noted.' }]
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script } }))
    const demo = startDemo(['--data-dir', tempDir()], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('take a note\n')
    await demo.waitFor(/\? allow write_file: write 5 bytes to notes\.txt\? \[y\]es \/ \[n\]o \/ \[a\]lways \(write_file on notes\.txt\) $/)
    demo.write('y\n')
    await demo.waitFor(/· turn 1 done/)
    demo.end()
    expect(await demo.exited).toBe(0)
    expect(demo.stdout()).toContain('  ◂ Wrote 5 bytes to notes.txt\nNoted.\n')
    expect(readFileSync(join(cwd, 'notes.txt'), 'utf8')).toBe('hello')
  })
})
