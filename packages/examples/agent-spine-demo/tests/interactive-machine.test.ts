import { describe, expect, it } from 'vitest'
import { InteractiveMachine, type MachineHost } from '../src/cli/interactive/machine'

/** A machine whose host records what it was asked to do, as one line per call. */
function machine(options: { refuse?: string; failed?: boolean } = {}) {
  const log: string[] = []
  const host: MachineHost = {
    prompt: () => void log.push('prompt'),
    ask: (question, always) => void log.push(`ask ${question}${always ? ` [always: ${always}]` : ''}`),
    say: (kind, text) => void log.push(`${kind} ${text}`),
    followup: (text) => {
      if (options.refuse) throw Object.assign(new Error(options.refuse), { code: 'PERSISTENCE_FAILED' })
      log.push(`followup ${text}`)
    },
    steer: (text) => void log.push(`steer ${text}`),
    cancel: () => void log.push('cancel'),
    command: async (text) => {
      log.push(`command ${text}`)
      // As the command runner does, synchronously: lines after /new or /resume wait for the switch.
      if (/^\/(new|resume)\b/.test(text)) m.holdLines()
    },
    close: (code) => void log.push(`close ${code}`),
    abort: () => {
      log.push('abort')
      return undefined as never
    },
    normalExitCode: () => (options.failed ? 1 : 0),
  }
  const m = new InteractiveMachine(host)
  return { m, log, take: () => log.splice(0) }
}

describe('InteractiveMachine (the interactive command line’s states)', () => {
  it('idle → running on a line; steering while a turn is open; queued between turns; idle again with a prompt', () => {
    const { m, take } = machine()
    m.start()
    m.line('hello')
    expect([m.state.name, take()]).toEqual(['running', ['prompt', 'followup hello']])
    m.status('running')
    m.turn(true)
    m.line('also this')
    expect(take()).toEqual(['steer also this'])
    m.turn(false)
    m.line('next one')
    expect([m.state.name, take()]).toEqual(['running', ['followup next one']])
    m.status('idle')
    expect([m.state.name, take()]).toEqual(['idle', ['prompt']])
  })

  it('Ctrl-C: cancels an open turn, then exits 130; when idle it exits 0 (1 after the log failed)', () => {
    const running = machine()
    running.m.line('hello')
    running.m.turn(true)
    running.take()
    running.m.interrupt()
    expect([running.m.state.name, running.take()]).toEqual(['cancelling', ['warn ^C cancelling the turn (press Ctrl-C again to exit)', 'cancel']])
    // A line typed while the cancel is under way is the next prompt, not steering of the ending turn.
    running.m.line('instead')
    expect(running.take()).toEqual(['followup instead'])
    running.m.interrupt()
    expect([running.m.state, running.take()]).toEqual([{ name: 'exiting', code: 130 }, ['close 130']])
    // Closing down: lines are ignored, one more Ctrl-C ends the process at once.
    running.m.line('ignored')
    running.m.interrupt()
    expect(running.take()).toEqual(['abort'])

    const idle = machine()
    idle.m.interrupt()
    expect(idle.take()).toEqual(['close 0'])
    const failed = machine({ failed: true })
    failed.m.interrupt()
    expect(failed.take()).toEqual(['close 1'])
  })

  it('a cancelled turn that has ended no longer counts as cancelling: the next Ctrl-C between turns exits 130', () => {
    const { m, take } = machine()
    m.line('hello')
    m.turn(true)
    m.interrupt()
    m.turn(false)
    expect(m.state.name).toBe('running')
    take()
    m.interrupt()
    expect(take()).toEqual(['close 130'])
  })

  it('approval: the next line answers; Ctrl-C denies and then cancels; input that ended denies', async () => {
    const { m, take } = machine()
    m.line('write it')
    m.turn(true)
    const allowed = m.approve('allow write_file: write 5 bytes to a.txt?', new AbortController().signal)
    expect(m.state.name).toBe('approval')
    m.line('y')
    expect(await allowed).toEqual({ decision: 'allow' })
    expect(m.state.name).toBe('running')

    const denied = m.approve('allow write_file?', new AbortController().signal)
    m.interrupt()
    expect(await denied).toEqual({ decision: 'deny' })
    expect([m.state.name, take().slice(-4)]).toEqual(['cancelling', ['ask allow write_file?', 'warn   (denied)', 'warn ^C cancelling the turn (press Ctrl-C again to exit)', 'cancel']])

    const aborted = new AbortController()
    const dropped = m.approve('allow write_file?', aborted.signal)
    aborted.abort()
    expect(await dropped).toEqual({ decision: 'deny' })
    expect(m.state.name).toBe('cancelling')

    m.inputEnd()
    expect(await m.approve('allow write_file?', new AbortController().signal)).toEqual({ decision: 'deny' })
  })

  it('approval answers: a (only when offered) remembers, n or Enter denies, other words deny with the reason', async () => {
    const { m, take } = machine()
    m.line('write it')
    m.turn(true)
    const ask = (always?: string) => m.approve('allow shell: run "npm test"?', new AbortController().signal, always)
    const answers = []
    for (const [line, always] of [['a', 'shell commands starting with "npm test"'], ['always', undefined], ['', undefined], ['No', undefined], ['use pnpm instead', undefined], ['YES', undefined]] as const) {
      const pending = ask(always)
      m.line(line)
      answers.push(await pending)
    }
    expect(answers).toEqual([
      { decision: 'allow', always: true },
      // "always" where it was not offered is no yes.
      { decision: 'deny' },
      { decision: 'deny' },
      { decision: 'deny' },
      { decision: 'deny', feedback: 'use pnpm instead' },
      { decision: 'allow' },
    ])
    expect(take().filter((line) => !line.startsWith('ask'))).toEqual([
      'followup write it',
      'note   (allowed for the rest of this session: shell commands starting with "npm test")',
      'warn   (denied)',
      'warn   (denied)',
      'warn   (denied)',
      'warn   (denied; your words go to the agent)',
    ])
    expect(m.state.name).toBe('running')
  })

  it('the end of input exits once idle, not before', () => {
    const { m, take } = machine()
    m.line('hello')
    m.inputEnd()
    expect(take()).toEqual(['followup hello'])
    m.status('idle')
    expect([m.state, take()]).toEqual([{ name: 'exiting', code: 0 }, ['close 0']])
  })

  it('/exit while the agent works exits once idle (lines meanwhile ignored, Ctrl-C cancels the turn); when idle, at once', () => {
    const { m, take } = machine()
    m.line('hello')
    m.status('running')
    m.turn(true)
    expect([m.exitWhenIdle(), m.state.name]).toEqual([false, 'running'])
    m.line('more')
    m.line('/sessions')
    expect(take()).toEqual(['followup hello'])
    m.interrupt()
    m.turn(false)
    m.status('idle')
    expect([m.state, take()]).toEqual([{ name: 'exiting', code: 0 }, ['warn ^C cancelling the turn (press Ctrl-C again to exit)', 'cancel', 'close 0']])
    const idle = machine({ failed: true })
    expect([idle.m.exitWhenIdle(), idle.m.state, idle.take()]).toEqual([true, { name: 'exiting', code: 1 }, ['close 1']])
  })

  it('the end of input while the agent works and a switch command waits for it: the switch and the lines after it run first, then the exit', () => {
    const { m, take } = machine()
    m.line('hello')
    m.line('/new')
    m.line('world')
    m.inputEnd()
    m.status('idle')
    expect([m.state.name, take()]).toEqual(['idle', ['followup hello', 'command /new', 'prompt']])
    const switching = m.switching()!
    switching.done()
    expect([m.state.name, take()]).toEqual(['running', ['followup world']])
    m.status('idle')
    expect([m.state, take()]).toEqual([{ name: 'exiting', code: 0 }, ['close 0']])
  })

  it('a refused prompt (the agent failed) is reported and the prompt comes back', () => {
    const { m, take } = machine({ refuse: 'the session log could not be made durable' })
    m.line('hello')
    expect([m.state.name, take()]).toEqual(['idle', ['error ✗ PERSISTENCE_FAILED: the session log could not be made durable', 'prompt']])
  })

  it('switching sessions: only from idle; lines and commands entered meanwhile wait, then run in order; a Ctrl-C exits 130', () => {
    const { m, take } = machine()
    const switching = m.switching()!
    expect(m.state.name).toBe('switching')
    m.line('/mode')
    m.line('too early')
    m.line('')
    expect(take()).toEqual([])
    switching.done()
    expect([m.state.name, take()]).toEqual(['running', ['command /mode', 'followup too early']])
    m.status('idle')
    take()
    const empty = m.switching()!
    empty.done()
    expect([m.state.name, take()]).toEqual(['idle', ['prompt']])
    // A switch command that arrived while the agent finished its turn: lines wait from then on.
    m.line('hello')
    m.holdLines()
    m.line('/resume other')
    m.line('next')
    expect(take()).toEqual(['followup hello'])
    m.status('idle')
    take()
    const resuming = m.switching()!
    expect(take()).toEqual([])
    resuming.done()
    expect([m.state.name, take()]).toEqual(['idle', ['command /resume other']])
    // The replayed /resume held the machine again: the lines after it wait for that switch.
    m.line('later')
    m.switching()!.done()
    expect([m.state.name, take()]).toEqual(['running', ['followup next', 'followup later']])
    expect(m.switching()).toBeUndefined()
    m.status('idle')
    m.switching()
    take()
    m.interrupt()
    expect(take()).toEqual(['close 130'])
  })

  it('the end of input while a switch command waits for the agent: the switch and the lines after it run first, then the exit', () => {
    const { m, take } = machine()
    m.line('/new')
    m.line('last')
    m.inputEnd()
    expect([m.state.name, take()]).toEqual(['idle', ['command /new']])
    m.switching()!.done()
    expect([m.state.name, take()]).toEqual(['running', ['followup last']])
    m.status('idle')
    expect([m.state.name, take()]).toEqual(['exiting', ['close 0']])
  })

  it('slash commands go to the command runner in any state but exiting', () => {
    const { m, take } = machine()
    m.line('/sessions')
    m.line('hello')
    m.turn(true)
    m.line('/help')
    m.exit(0)
    m.line('/exit')
    expect(take()).toEqual(['command /sessions', 'followup hello', 'command /help', 'close 0'])
  })
})
