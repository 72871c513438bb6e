import { describe, expect, it } from 'vitest'
import { onlySession, runDemo, sessionFiles, tempDir, trace, workspace } from './helpers'

/** The prompts of a stored session, in order. */
const prompts = (events: Parameters<typeof trace>[0]) => trace(events).filter((line) => line.startsWith('user/message'))

// A script piped into the interactive command line: its lines arrive together, and each must act in order.
describe.concurrent('dsh-demo interactive, lines piped in at once', { timeout: 240_000 }, () => {
  it('/resume <id> then a prompt: the prompt goes to the resumed session, not to a new one', async () => {
    const cwd = workspace()
    const data = tempDir()
    expect((await runDemo(['-p', 'hello', '--data-dir', data], { cwd })).status).toBe(0)
    const { id } = onlySession(data)

    const { status, stdout } = await runDemo(['--data-dir', data], { cwd, input: `/resume ${id}\nhello again\n` })
    expect(status).toBe(0)
    expect(stdout).toMatch(new RegExp(`^session ${id} \\(resumed, 1 turn so far\\)`, 'm'))
    const sessions = sessionFiles(data)
    // The session the run opened before the /resume held nothing and is not kept.
    expect(Object.keys(sessions)).toEqual([id])
    expect(prompts(sessions[id]!)).toEqual(['user/message "hello"', 'user/message "hello again"'])
  })

  it('/resume of an unknown id then a prompt: the failure is said before the prompt runs, in the session the run started', async () => {
    const cwd = workspace()
    const data = tempDir()
    const { status, stdout } = await runDemo(['--data-dir', data], { cwd, input: '/resume nope\nhello\n' })
    expect(status).toBe(0)
    const lines = stdout.split('\n')
    const failure = lines.findIndex((line) => line.startsWith('✗ SESSION_NOT_FOUND: No persisted session "nope"'))
    const answer = lines.findIndex((line) => line.includes('You said: "hello"'))
    expect({ failed: failure >= 0, before: failure < answer }).toEqual({ failed: true, before: true })
    expect(prompts(onlySession(data).events)).toEqual(['user/message "hello"'])
  })

  it('a prompt then /exit: the prompt is answered, then the run exits (the turn was cancelled and the answer lost)', async () => {
    const cwd = workspace()
    const data = tempDir()
    const { status, stdout } = await runDemo(['--data-dir', data], { cwd, input: 'hello\n/exit\nnot sent\n' })
    expect(status).toBe(0)
    expect(stdout).toContain('You said: "hello"')
    const lines = trace(onlySession(data).events)
    // The line after /exit is not sent: the run is on its way out.
    expect({ prompts: prompts(onlySession(data).events), last: lines.at(-1) }).toEqual({ prompts: ['user/message "hello"'], last: 'turn/end 1 completed' })
  })

  it('a prompt, /new, a prompt, then the end of input: each prompt runs in its session (the end of input dropped the switch and the line after it)', async () => {
    const cwd = workspace()
    const data = tempDir()
    const { status, stdout } = await runDemo(['--data-dir', data], { cwd, input: 'hello\n/new\nworld\n' })
    expect(status).toBe(0)
    expect(stdout).not.toContain('a turn is running')
    const sessions = Object.values(sessionFiles(data)).map((events) => prompts(events))
    expect(sessions.sort()).toEqual([['user/message "hello"'], ['user/message "world"']])
  })

  it('a prompt then /compact: the compaction comes after the prompt\'s turn (it ran first, on the empty history)', async () => {
    const cwd = workspace()
    const data = tempDir()
    const { status, stdout } = await runDemo(['--data-dir', data], { cwd, input: 'hello\n/compact\nagain\n' })
    expect(status).toBe(0)
    const lines = stdout.split('\n')
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line))
    const order = { turn1: at(/^· turn 1 done/), compaction: at(/^· nothing to (gain|compact)/), turn2: at(/^· turn 2 done/) }
    expect({ empty: stdout.includes('the history is empty'), inOrder: order.turn1 < order.compaction && order.compaction < order.turn2, found: Object.values(order).every((i) => i >= 0) }).toEqual({
      empty: false,
      inOrder: true,
      found: true,
    })
    expect(prompts(onlySession(data).events)).toEqual(['user/message "hello"', 'user/message "again"'])
  })
})
