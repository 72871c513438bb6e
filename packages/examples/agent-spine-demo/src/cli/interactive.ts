import { createInterface } from 'node:readline'
import type { AgentHandle } from '@deepseek-ai/dsh-agent'
import type { ApprovalRequest } from '@deepseek-ai/dsh-tools'
import { cwdMismatch, openAgent, type AgentObserver } from './agent-session'
import { describeRequest } from './approval'
import { startApp } from './app'
import { describeError } from './describe-error'
import type { CliIo } from './io'
import type { DemoSettings } from './settings'
import { styleFor } from './style'
import { LineWriter, Spinner, TurnView } from './turn-view'

const HELP = 'Enter sends a message · typing while the agent works steers it · Ctrl-C cancels the turn, twice exits\n' +
  'Commands: /sessions (list saved sessions) · /resume <id> · /new · /exit'

interface PendingApproval {
  settle(decision: 'allow' | 'deny'): void
}

/**
 * The interactive agent. Each line the person enters becomes a follow-up
 * when the agent is idle and steers the running turn otherwise; the answer
 * streams as it arrives. Ctrl-C (the terminal's, a SIGINT, or a `\x03` byte
 * on a piped stdin) cancels the running turn; a second Ctrl-C, or one when
 * idle, exits. End of input waits for the running turn, then exits.
 * `write_file` asks the person (`y` allows). Resolves with the exit status.
 */
export async function runInteractive(settings: DemoSettings, io: CliIo): Promise<number> {
  const tty = io.stdin.isTTY === true && io.stdout.isTTY === true
  const out = new LineWriter(io.stdout)
  const style = styleFor(io.stdout, io.env)
  const spinner = tty ? new Spinner(io.stdout) : undefined
  const agentOptions = settings.reasoningEffort ? { reasoningEffort: settings.reasoningEffort } : {}

  let handle: AgentHandle | undefined
  let view: TurnView | undefined
  let pending: PendingApproval | undefined
  /** The driver is running (or a prompt was just submitted): no `> ` prompt until it goes idle. */
  let busy = false
  /** A turn is open (between its `turn/start` and `turn/end`): a line typed now steers it. */
  let turnOpen = false
  let cancelling = false
  /** The last thing written is a prompt or a question, waiting for a line. */
  let asking = false
  let closing = false
  let inputEnded = false
  let finished: ((code: number) => void) | undefined
  const done = new Promise<number>((resolve) => (finished = resolve))

  const decide = (request: ApprovalRequest) =>
    new Promise<'allow' | 'deny'>((resolve) => {
      if (inputEnded || request.signal.aborted) return resolve('deny')
      view?.pause()
      const onAbort = () => approval.settle('deny')
      const approval: PendingApproval = {
        settle(decision) {
          if (pending !== approval) return
          pending = undefined
          request.signal.removeEventListener('abort', onAbort)
          if (decision === 'deny') out.line(style('yellow', '  (denied)'))
          resolve(decision)
        },
      }
      pending = approval
      request.signal.addEventListener('abort', onAbort, { once: true })
      out.newline()
      out.write(style('yellow', `? allow ${describeRequest(request)}? [y/N] `))
      asking = true
    })

  const observe = (turnView: TurnView): AgentObserver => ({
    onEvent: (_session, event) => {
      // One agent runs turns at a time: a session is switched only between turns.
      if (event.type === 'turn/start') turnOpen = true
      else if (event.type === 'turn/end') turnOpen = false
      turnView.onEvent(event)
    },
    onStatus: (agent, status) => {
      if (agent !== handle?.agent) return
      if (status === 'running') {
        busy = true
        return
      }
      busy = false
      cancelling = false
      if (inputEnded) void shutdown(0)
      else prompt()
    },
  })

  const open = async (resume: string | undefined): Promise<AgentHandle> => {
    const turnView = new TurnView({ answer: out, notes: out, style, spinner })
    const opened = await openAgent(app.ctx, { cwd: settings.cwd, resume, agentOptions }, observe(turnView))
    view = turnView
    return opened
  }

  const app = await startApp(settings, decide, (violation) => out.line(style('red', `! invariant ${violation.invariant} broken: ${violation.message}`)))
  try {
    handle = await open(settings.resume)
  } catch (error) {
    await app.dispose()
    throw error
  }
  // Input is read only from here on: lines typed earlier wait in the stream.
  const rl = createInterface({ input: io.stdin, output: tty ? (io.stdout as NodeJS.WritableStream) : undefined, terminal: tty, prompt: '> ' })

  const prompt = () => {
    if (closing || busy || pending) return
    out.newline()
    if (tty) rl.prompt()
    else out.write('> ')
    out.atLineStart = false
    asking = true
  }

  /**
   * Disposes an agent and waits until its file is released (so it can be
   * resumed right away). A session that holds nothing but its meta (opened,
   * never used) is deleted rather than kept in the list.
   */
  const close = async (target: AgentHandle) => {
    const { id, session } = target.agent
    await target.dispose()
    const persistence = app.ctx.sessionPersistence
    await persistence.flush(id).catch(() => {})
    if (session.events.length === 1) await persistence.delete(id).catch(() => {})
  }

  const shutdown = async (code: number) => {
    if (closing) return
    closing = true
    pending?.settle('deny')
    view?.pause()
    out.newline()
    rl.close()
    try {
      if (turnOpen && !cancelling) handle?.agent.cancel({ kind: 'user' })
      if (handle) await close(handle)
    } finally {
      await app.dispose()
      finished!(code)
    }
  }

  const interrupt = () => {
    if (closing) return
    pending?.settle('deny')
    if (turnOpen && !cancelling && handle) {
      cancelling = true
      view?.pause()
      out.line(style('yellow', '^C cancelling the turn (press Ctrl-C again to exit)'))
      handle.agent.cancel({ kind: 'user' })
      return
    }
    out.newline()
    void shutdown(busy ? 130 : 0)
  }

  const switchTo = async (resume: string | undefined) => {
    const old = handle!
    let next: AgentHandle
    try {
      next = await open(resume)
    } catch (error) {
      out.line(style('red', `✗ ${describeError(error)}`))
      return prompt()
    }
    handle = next
    await close(old)
    greet(resume !== undefined)
    prompt()
  }

  const command = async (text: string) => {
    const [name, ...args] = text.split(/\s+/)
    switch (name) {
      case '/exit':
      case '/quit':
        return shutdown(0)
      case '/help':
        out.line(HELP)
        return prompt()
      case '/sessions':
        await listSessions()
        return prompt()
      case '/new':
      case '/resume': {
        if (turnOpen) {
          out.line(style('yellow', `a turn is running: wait for it, or cancel it with Ctrl-C, before ${name}`))
          return
        }
        // A turn that just ended may still be flushing; let it finish first.
        await handle!.agent.whenIdle()
        const id = name === '/resume' ? args[0] : undefined
        if (name === '/resume' && !id) {
          out.line('usage: /resume <id>   (/sessions lists them)')
          return prompt()
        }
        if (id === handle!.agent.id) {
          out.line(`already in session ${id}`)
          return prompt()
        }
        return switchTo(id)
      }
      default:
        out.line(`unknown command ${name}; ${HELP.split('\n')[1]}`)
        return prompt()
    }
  }

  const listSessions = async () => {
    let sessions
    try {
      sessions = await app.ctx.sessionPersistence.list()
    } catch (error) {
      return out.line(style('red', `✗ ${describeError(error)}`))
    }
    if (sessions.length === 0) return out.line(`no saved sessions in ${settings.dataDir}`)
    sessions.sort((a, b) => b.updatedAt - a.updatedAt)
    const current = handle?.agent.id
    out.line(`saved sessions in ${settings.dataDir} (newest first):`)
    for (const info of sessions.slice(0, 20)) {
      const mark = info.id === current ? '*' : ' '
      out.line(`${mark} ${info.id}  updated ${localTime(info.updatedAt)}${info.cwd ? `  ${info.cwd}` : ''}`)
    }
    if (sessions.length > 20) out.line(`  … and ${sessions.length - 20} older`)
  }

  const greet = (resumed: boolean) => {
    const agent = handle!.agent
    const turns = agent.session.position.lastTurn
    const route = settings.route.kind === 'scripted' ? 'offline scripted model' : `${settings.route.provider} at ${settings.route.baseUrl}`
    out.line(style('bold', `dsh demo · ${route} (${settings.route.provider}/${settings.route.model})`))
    out.line(
      style('dim', `session ${agent.id}${resumed ? ` (resumed, ${turns} turn${turns === 1 ? '' : 's'} so far)` : ''} · workspace ${settings.cwd} · saved in ${settings.dataDir}`),
    )
    const mismatch = cwdMismatch(settings.cwd, agent.session.meta.cwd)
    if (mismatch) out.line(style('yellow', `! ${mismatch}`))
  }

  rl.on('line', (raw) => {
    // A terminal echoed the Enter; on a pipe nothing was echoed after the prompt (and a line
    // typed while the answer streams must not break it).
    if (tty) out.atLineStart = true
    else if (asking) out.newline()
    asking = false
    // On a piped stdin, Ctrl-C arrives as a byte; it was handled as an interrupt already.
    const text = raw.replaceAll('\x03', '').trim()
    if (pending) return pending.settle(/^y(es)?$/i.test(text) ? 'allow' : 'deny')
    if (closing) return
    if (text === '') return prompt()
    if (text.startsWith('/')) return void command(text)
    const agent = handle!.agent
    try {
      // While a cancel is under way the turn is ending: the line is the next prompt, not steering.
      if (turnOpen && !cancelling) {
        agent.steer(text)
      } else {
        busy = true
        agent.followup(text)
      }
    } catch (error) {
      busy = agent.status === 'running'
      out.line(style('red', `✗ ${describeError(error)}`))
      prompt()
    }
  })
  rl.on('SIGINT', interrupt)
  rl.on('close', () => {
    inputEnded = true
    pending?.settle('deny')
    if (!busy) void shutdown(0)
  })
  const onData = (chunk: Buffer | string) => {
    for (const char of String(chunk)) if (char === '\x03') interrupt()
  }
  if (!tty) io.stdin.on('data', onData)
  const removeInterrupt = io.onInterrupt(interrupt)

  greet(settings.resume !== undefined)
  out.line(style('dim', HELP))
  if (handle.agent.inbox.nextTurn.length) out.line(style('dim', `${handle.agent.inbox.nextTurn.length} queued prompt(s) from the last run will run with your next message`))
  prompt()
  try {
    return await done
  } finally {
    removeInterrupt()
    io.stdin.off('data', onData)
  }
}

function localTime(ms: number): string {
  const date = new Date(ms)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`
}
