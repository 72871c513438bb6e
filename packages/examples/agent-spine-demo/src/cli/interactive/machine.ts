import { describeError } from '../describe-error'

/**
 * The interactive command line as a state machine. Every input (a line, a
 * Ctrl-C, the end of input, the agent going idle or running, a turn opening
 * or closing, a tool asking for approval) is one method; each method looks at
 * the current state and moves to the next. Side effects (printing, driving
 * the agent, closing down) go through `MachineHost`, so the rules live here
 * and nowhere else.
 *
 * States:
 * - `idle`: the `> ` prompt is shown; a line starts a turn (`followup`), a
 *   Ctrl-C exits 0.
 * - `running`: the agent works. A line steers the open turn (or, between
 *   turns, queues the next prompt); a Ctrl-C cancels the open turn (between
 *   turns, it exits 130).
 * - `cancelling`: the open turn is being cancelled. A line becomes the next
 *   prompt (the ending turn takes no steering); a Ctrl-C exits 130.
 * - `approval`: a tool call asks; the next line answers (`y` allows, `a`
 *   allows and remembers when "always" is offered, `n` or nothing denies,
 *   any other words deny and go to the model as the reason), a Ctrl-C
 *   denies and goes on as in the state it interrupted.
 * - `switching`: `/new` or `/resume` is replacing the session, or `/compact`
 *   is compacting it; lines and
 *   commands entered meanwhile wait, and run in order in the session the
 *   switch leaves (a script piped in, `/resume <id>` then a prompt, acts
 *   as written); a Ctrl-C exits 130.
 * - `exiting`: closing down (at most `EXIT_GRACE_MS`); lines are ignored, a
 *   Ctrl-C ends the process at once.
 *
 * Beside the state, three facts: whether a turn is open (from the log's
 * `turn/start` / `turn/end`), whether input has ended, and whether `/exit`
 * was entered while the agent worked (in both cases the machine exits as
 * soon as it is idle; after `/exit`, lines are ignored).
 */
export type InteractiveState =
  | { readonly name: 'idle' }
  | { readonly name: 'running' }
  | { readonly name: 'cancelling' }
  | { readonly name: 'approval'; readonly approval: PendingApproval; readonly resume: 'running' | 'cancelling' }
  | { readonly name: 'switching' }
  | { readonly name: 'exiting'; readonly code: number }

/** The person's answer to an approval question. */
export interface MachineAnswer {
  readonly decision: 'allow' | 'deny'
  /** `a`: allow calls like this one for the rest of the session (only when "always" was offered). */
  readonly always?: true
  /** Words the person typed instead of y/n/a: a refusal, with their reason for the model. */
  readonly feedback?: string
}

/** A tool call waiting for the person's decision. */
export interface PendingApproval {
  readonly question: string
  /** What "always" would cover, in words, when it is offered. */
  readonly always?: string
  readonly signal: AbortSignal
  settle(answer: MachineAnswer): void
}

const DENY: MachineAnswer = Object.freeze({ decision: 'deny' })

/** Reads an answer line: y, a (when offered), n or nothing, or words (a refusal with a reason). */
export function readAnswer(text: string, always: boolean): MachineAnswer {
  if (/^y(es)?$/i.test(text)) return { decision: 'allow' }
  if (/^a(lways)?$/i.test(text)) return always ? { decision: 'allow', always: true } : DENY
  if (text === '' || /^no?$/i.test(text)) return DENY
  return { decision: 'deny', feedback: text }
}

/** What the machine does to the world. */
export interface MachineHost {
  /** Shows the `> ` prompt. */
  prompt(): void
  /** Shows an approval question (with "always" and what it covers, when offered), waiting for a line. */
  ask(question: string, always?: string): void
  /** Prints a line: `warn` (yellow) or `error` (red). */
  say(kind: 'note' | 'warn' | 'error', text: string): void
  /** Starts a turn with `text` (or queues it behind the running one). Throws when the agent refuses it. */
  followup(text: string): void
  /** Hands `text` to the open turn. Throws when the agent refuses it. */
  steer(text: string): void
  /** Cancels the open turn. */
  cancel(): void
  /** Runs a slash command line (`/sessions`, `/new`, …); see `commands.ts`. */
  command(text: string): Promise<void>
  /** Closes down (the agent, its log, the app) and ends the run with `code`; bounded by the exit guard. */
  close(code: number): void
  /** Ends the process at once (a Ctrl-C while closing down). */
  abort(): never
  /** The status the run should exit with when it ends normally: 1 after the log failed, else 0. */
  normalExitCode(): number
}

export class InteractiveMachine {
  private current: InteractiveState = { name: 'idle' }
  private open = false
  private inputEnded = false
  /** `/exit` was entered while the agent worked: exit once it is idle. */
  private exitPending = false
  /** Lines entered while a session switch was pending or under way, in order: they run once it is done. */
  private held: string[] = []
  /** A switch command arrived and waits for the agent to be idle: lines wait too. */
  private holding = false

  constructor(private readonly host: MachineHost) {}

  get state(): InteractiveState {
    return this.current
  }

  /** Whether a turn is open (a line typed now would steer it). */
  get turnOpen(): boolean {
    return this.open
  }

  /** Shows the first prompt. */
  start(): void {
    this.host.prompt()
  }

  /** A line the person entered (`\x03` bytes removed, trimmed). */
  line(text: string): void {
    const state = this.current
    if (state.name === 'approval') {
      this.current = { name: state.resume }
      return state.approval.settle(readAnswer(text, state.approval.always !== undefined))
    }
    if (state.name === 'exiting' || this.exitPending) return
    if (text === '') {
      if (state.name === 'idle') this.host.prompt()
      return
    }
    if (state.name === 'switching' || this.holding) return void this.held.push(text)
    if (text.startsWith('/')) return void this.host.command(text)
    try {
      // While a cancel is under way the turn is ending: the line is the next prompt, not steering.
      if (state.name === 'running' && this.open) return this.host.steer(text)
      this.host.followup(text)
      if (state.name === 'idle') this.current = { name: 'running' }
    } catch (error) {
      this.host.say('error', `✗ ${describeError(error)}`)
      if (this.current.name === 'idle') this.host.prompt()
    }
  }

  /** Ctrl-C: the terminal's, a SIGINT, or a `\x03` byte on a pipe. */
  interrupt(): void {
    const state = this.current
    switch (state.name) {
      case 'approval':
        this.current = { name: state.resume }
        state.approval.settle(DENY)
        return this.interrupt()
      case 'idle':
        return this.exit(this.host.normalExitCode())
      case 'running':
        if (!this.open) return this.exit(130)
        this.current = { name: 'cancelling' }
        this.host.say('warn', '^C cancelling the turn (press Ctrl-C again to exit)')
        return this.host.cancel()
      case 'cancelling':
      case 'switching':
        return this.exit(130)
      case 'exiting':
        return this.host.abort()
    }
  }

  /** The end of input: exit once the agent is idle. */
  inputEnd(): void {
    this.inputEnded = true
    const state = this.current
    if (state.name === 'approval') {
      this.current = { name: state.resume }
      state.approval.settle(DENY)
    } else if (state.name === 'idle' && !this.holding) {
      // While a switch command waits for the agent, the switch (and the lines after it) come first.
      this.exit(this.host.normalExitCode())
    }
  }

  /** The current agent's driver went `running` or `idle`. */
  status(status: 'idle' | 'running'): void {
    const state = this.current.name
    if (status === 'running') {
      if (state === 'idle') this.current = { name: 'running' }
      return
    }
    if (state !== 'running' && state !== 'cancelling') return
    this.current = { name: 'idle' }
    // A switch command waiting for the agent (a script piped in: a prompt, /new, more lines) comes before the exit.
    if ((this.inputEnded || this.exitPending) && !this.holding) this.exit(this.host.normalExitCode())
    else this.host.prompt()
  }

  /** A turn of the current agent opened (`turn/start`) or closed (`turn/end`). */
  turn(open: boolean): void {
    this.open = open
    // The cancelled turn has ended: the next Ctrl-C cancels whatever runs next, or exits.
    if (!open && this.current.name === 'cancelling') this.current = { name: 'running' }
  }

  /**
   * A tool asks to run. Resolves with the person's answer; denied at once
   * when input has ended, the machine is closing down, or the call was
   * aborted. An abort while waiting denies it. `always` (what an "always"
   * answer would cover, in words) offers that choice.
   */
  approve(question: string, signal: AbortSignal, always?: string): Promise<MachineAnswer> {
    return new Promise((resolve) => {
      const state = this.current
      if (this.inputEnded || signal.aborted || state.name === 'exiting' || state.name === 'approval') return resolve(DENY)
      const onAbort = () => approval.settle(DENY)
      let settled = false
      const approval: PendingApproval = {
        question,
        ...(always !== undefined ? { always } : {}),
        signal,
        settle: (answer) => {
          if (settled) return
          settled = true
          signal.removeEventListener('abort', onAbort)
          if (this.current.name === 'approval' && this.current.approval === approval) this.current = { name: this.current.resume }
          if (answer.decision === 'deny') this.host.say('warn', answer.feedback ? '  (denied; your words go to the agent)' : '  (denied)')
          else if (answer.always) this.host.say('note', `  (allowed for the rest of this session: ${always})`)
          resolve(answer)
        },
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.current = { name: 'approval', approval, resume: state.name === 'cancelling' ? 'cancelling' : 'running' }
      this.host.ask(question, always)
    })
  }

  /**
   * `/new`, `/resume` arrived: lines entered from now on wait (they belong
   * to the session the switch leaves) until `switching()` is called, which
   * the command does once the agent is idle.
   */
  holdLines(): void {
    this.holding = true
  }

  /**
   * `/new`, `/resume`: the session is being replaced (`done` when it is, or
   * the switch failed). Undefined when the machine is not idle: then the
   * lines held since `holdLines()` run at once, as entered.
   */
  switching(): { done(): void } | undefined {
    this.holding = false
    if (this.current.name !== 'idle') {
      this.replay()
      return undefined
    }
    this.current = { name: 'switching' }
    this.open = false
    return {
      done: () => {
        if (this.current.name !== 'switching') return
        this.current = { name: 'idle' }
        // A replayed line that came back to idle (a command, a refused prompt) showed the prompt itself.
        const replayed = this.replay()
        if (this.current.name !== 'idle') return
        if (this.inputEnded) this.exit(this.host.normalExitCode())
        else if (!replayed) this.host.prompt()
      },
    }
  }

  /** Runs the held lines in order, until one switches again (the rest waits for that switch). Whether any ran. */
  private replay(): boolean {
    const any = this.held.length > 0
    while (this.held.length && !this.holding && this.current.name !== 'switching' && this.current.name !== 'exiting') this.line(this.held.shift()!)
    return any
  }

  /**
   * `/exit`: exits now when the agent is idle; while it works, once it is
   * idle, as the end of input does (a script piped in, a prompt then
   * `/exit`, gets its answer; Ctrl-C cancels the turn). Lines entered
   * meanwhile are ignored. Whether the exit has begun.
   */
  exitWhenIdle(): boolean {
    const state = this.current.name
    if (state === 'running' || state === 'cancelling') {
      this.exitPending = true
      return false
    }
    this.exit(this.host.normalExitCode())
    return true
  }

  /** Closes down with `code` (Ctrl-C, the end of input, `/exit`). */
  exit(code: number): void {
    if (this.current.name === 'exiting') return
    const state = this.current
    this.current = { name: 'exiting', code }
    if (state.name === 'approval') state.approval.settle(DENY)
    this.host.close(code)
  }
}
