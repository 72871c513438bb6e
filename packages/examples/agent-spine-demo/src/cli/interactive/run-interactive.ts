import { createInterface } from 'node:readline'
import type { ApprovalRequest } from '@deepseek-ai/dsh-tools'
import { cwdMismatch } from '../agent-session'
import { describeRequest } from '../approval'
import { startApp } from '../app'
import { describeError } from '../describe-error'
import { ExitGuard } from '../exit-guard'
import type { CliIo } from '../io'
import { routeSecrets } from '../model-route'
import { Redactor, redactUrlUserinfo } from '../redact'
import type { DemoSettings } from '../settings'
import { styleFor } from '../style'
import { transcriptLines } from '../transcript'
import { AgentSlot } from './agent-slot'
import { HELP, runCommand, type CommandContext } from './commands'
import { InteractiveMachine, type MachineHost } from './machine'
import { Output } from './output'

/**
 * The interactive agent. Each line the person enters becomes a follow-up
 * when the agent is idle and steers the running turn otherwise; the answer
 * streams as it arrives. Ctrl-C (the terminal's, a SIGINT, or a `\x03` byte
 * on a piped stdin) cancels the running turn; a second Ctrl-C, or one when
 * idle, exits (closing down within `EXIT_GRACE_MS`), and one more ends the
 * process at once. End of input waits for the running turn, then exits.
 * `write_file` asks the person (`y` allows). Resolves with the exit status:
 * 0, 130 after an interrupted turn, 1 when a session could not be saved.
 *
 * This function only wires the parts: `InteractiveMachine` (the states and
 * their rules), `AgentSlot` (the current agent), `Output` (the screen) and
 * the slash commands.
 */
export async function runInteractive(settings: DemoSettings, io: CliIo): Promise<number> {
  const tty = io.stdin.isTTY === true && io.stdout.isTTY === true
  const redactor = new Redactor(routeSecrets(settings.route, io.env))
  const redact = (text: string) => redactor.redact(text)
  const output = new Output(io.stdout, styleFor(io.stdout, io.env), tty, redact)
  const guard = new ExitGuard(io.abort)
  let finished!: (code: number) => void
  const done = new Promise<number>((resolve) => (finished = resolve))
  /** A Ctrl-C was pressed: the exit it leads to is bounded by the guard. */
  let interrupted = false

  // The host's parts are created below; the machine calls into them only after they exist.
  let slot!: AgentSlot
  let closeRun!: (code: number) => void
  const host: MachineHost = {
    prompt: () => output.prompt(),
    ask: (question) => {
      slot.pause()
      output.ask(question)
    },
    say: (kind, text) => {
      slot.pause()
      output.say(kind, text)
    },
    followup: (text) => void slot.current.agent.followup(text),
    steer: (text) => void slot.current.agent.steer(text),
    cancel: () => slot.current.agent.cancel({ kind: 'user' }),
    command: (text) => runCommand(text, commands),
    close: (code) => closeRun(code),
    abort: () => guard.force(),
    normalExitCode: () => (slot.failed ? 1 : 0),
  }
  const machine = new InteractiveMachine(host)

  const decide = (request: ApprovalRequest) => machine.approve(`allow ${describeRequest(request)}?`, request.signal)
  const app = await startApp(settings, decide, (violation) => output.say('error', `! invariant ${violation.invariant} broken: ${violation.message}`), {
    plugin: io.env.DSH_DEMO_PLUGIN,
  })
  slot = new AgentSlot(app, output, machine, {
    cwd: settings.cwd,
    agentOptions: settings.reasoningEffort ? { reasoningEffort: settings.reasoningEffort } : {},
    redact,
    onProgress: () => guard.progress(),
  })
  try {
    await slot.switchTo(settings.resume)
  } catch (error) {
    await app.dispose()
    throw error
  }

  const greet = (resumed: boolean) => {
    const agent = slot.current.agent
    const turns = agent.session.position.lastTurn
    const route = settings.route.kind === 'scripted' ? 'offline scripted model' : `${settings.route.provider} at ${redactUrlUserinfo(settings.route.baseUrl)}`
    output.line(output.style('bold', `dsh demo · ${route} (${settings.route.provider}/${settings.route.model})`))
    output.say('note', `session ${agent.id}${resumed ? ` (resumed, ${turns} turn${turns === 1 ? '' : 's'} so far)` : ''} · workspace ${settings.cwd} · saved in ${settings.dataDir}`)
    for (const line of slot.loadReportLines()) output.say('warn', line)
    const mismatch = cwdMismatch(settings.cwd, agent.session.meta.cwd)
    if (mismatch) output.say('warn', `! ${mismatch}`)
    if (resumed) for (const line of transcriptLines(agent.session.events)) output.say('note', line)
  }

  const commands: CommandContext = {
    machine,
    output,
    dataDir: settings.dataDir,
    currentId: () => slot.current.agent.id,
    whenIdle: () => slot.current.agent.whenIdle(),
    listSessions: () => app.ctx.sessionPersistence.list(),
    switchTo: async (resume) => {
      try {
        await slot.switchTo(resume)
      } catch (error) {
        output.say('error', `✗ ${describeError(error)}`)
        return
      }
      greet(resume !== undefined)
    },
  }

  // Input is read only from here on: lines typed earlier wait in the stream.
  const rl = createInterface({ input: io.stdin, output: tty ? (io.stdout as NodeJS.WritableStream) : undefined, terminal: tty, prompt: '> ' })
  output.attach(rl)

  closeRun = (code) => {
    slot.pause()
    output.finish()
    rl.close()
    const close = async () => {
      if (machine.turnOpen) slot.current.agent.cancel({ kind: 'user' })
      try {
        await slot.closeCurrent()
      } finally {
        await app.dispose()
      }
    }
    // Only an exit the person forced with Ctrl-C is bounded; /exit and the end of input wait for the close.
    const closing = code === 130 || interrupted ? guard.close(close) : close()
    closing.then(
      () => finished(code === 0 && slot.failed ? 1 : code),
      (error: unknown) => {
        output.say('error', `✗ ${describeError(error)}`)
        finished(code === 0 ? 1 : code)
      },
    )
  }

  const interrupt = () => {
    interrupted = true
    machine.interrupt()
  }
  rl.on('line', (raw) => {
    output.entered()
    // On a piped stdin, Ctrl-C arrives as a byte; it was handled as an interrupt already.
    machine.line(raw.replaceAll('\x03', '').trim())
  })
  rl.on('SIGINT', interrupt)
  rl.on('close', () => machine.inputEnd())
  const onData = (chunk: Buffer | string) => {
    for (const char of String(chunk)) if (char === '\x03') interrupt()
  }
  if (!tty) io.stdin.on('data', onData)
  const removeInterrupt = io.onInterrupt(interrupt)

  greet(settings.resume !== undefined)
  output.say('note', HELP)
  const queued = slot.current.agent.inbox.nextTurn.length
  if (queued) output.say('note', `${queued} queued prompt(s) from the last run will run with your next message`)
  machine.start()
  try {
    return await done
  } finally {
    removeInterrupt()
    io.stdin.off('data', onData)
  }
}
