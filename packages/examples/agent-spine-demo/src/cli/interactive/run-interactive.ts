import { createInterface } from 'node:readline'
import { describeScope, type PermissionMode } from '@deepseek-ai/dsh-permissions'
import type { ApprovalRequest, ApprovalResponse } from '@deepseek-ai/dsh-tools'
import { cwdMismatch } from '../agent-session'
import { approvalQuestion } from '../approval'
import { startApp } from '../app'
import { describeError } from '../describe-error'
import { ExitGuard, bound, firstStop } from '../exit-guard'
import type { CliIo, RunStatus, StopSignal } from '../io'
import { routeSecrets } from '../model-route'
import { Redactor, redactUrlUserinfo } from '../redact'
import type { DemoSettings } from '../settings'
import { styleFor } from '../style'
import { lastAnswer, transcriptLines } from '../transcript'
import { showAnswer } from './resume-answer'
import { contextShare, skippedLine } from '../compaction-lines'
import { AgentSlot } from './agent-slot'
import { HELP, runCommand, type CommandContext } from './commands'
import { mcpLines } from '../mcp'
import { tasksCommand } from '../subagents'
import { InteractiveMachine, type MachineHost } from './machine'
import { Output } from './output'
import { CostMeter, costLines } from '../cost-meter'
import { expandMentions } from '../mentions'
import { ModelSwitch } from '../model-switch'
import { PriceTable } from '../prices'
import { PromptHistoryFile } from './history-file'
import { promptHistory } from './prompt-history'
import { TerminalInput, type RawInput } from './terminal-input'

/**
 * The interactive agent. Each line the person enters becomes a follow-up
 * when the agent is idle and steers the running turn otherwise; the answer
 * streams as it arrives. Ctrl-C (the terminal's, a SIGINT, or a `\x03` byte
 * on a piped stdin) cancels the running turn; a second Ctrl-C, or one when
 * idle, exits (closing down within `EXIT_GRACE_MS`), and one more ends the
 * process at once. End of input waits for the running turn, then exits.
 * A call the permissions ask about prompts the person (`y` allows, `a`
 * allows the same kind of call for the rest of the session, `n` denies, other
 * words deny and reach the model); `/mode` shows or changes the permission
 * mode, `/trust` applies the workspace's rules. Resolves with the exit status:
 * 0, 130 after an interrupted turn, 1 when a session could not be saved.
 * SIGTERM or SIGHUP exits as a Ctrl-C that exits does (the open turn
 * cancelled and ended in the log, the log flushed, the session released,
 * within `EXIT_GRACE_MS` without progress; a second signal ends the process
 * at once) and resolves with the signal, which the process re-raises; with 1
 * when the close failed (said on the screen).
 *
 * This function only wires the parts: `InteractiveMachine` (the states and
 * their rules), `AgentSlot` (the current agent), `Output` (the screen) and
 * the slash commands.
 */
export async function runInteractive(settings: DemoSettings, io: CliIo): Promise<RunStatus> {
  const tty = io.stdin.isTTY === true && io.stdout.isTTY === true
  // A terminal that cannot move its cursor (TERM=dumb) gets Node's line reading and the answer as it came, no screen.
  const screen = tty && io.env.TERM !== 'dumb'
  const redactor = new Redactor(routeSecrets(settings.route, io.env))
  const redact = (text: string) => redactor.redact(text)
  const output = new Output(io.stdout, styleFor(io.stdout, io.env), tty, redact, screen)
  /** SIGTERM or SIGHUP asked the run to stop: it exits by that signal, and a forced end is by it too. */
  let stopped: StopSignal | undefined
  const guard = new ExitGuard(() => io.abort(stopped ?? 'SIGINT'))
  let finished!: (code: RunStatus) => void
  const done = new Promise<RunStatus>((resolve) => (finished = resolve))
  /** A Ctrl-C was pressed: the exit it leads to is bounded by the guard. */
  let interrupted = false
  /** The machine has started: a stop signal can go through it. */
  let started = false
  /** The close under way, once an exit has begun. */
  let closing: Promise<void> | undefined
  const stop = (signal: StopSignal) => {
    if (!firstStop(stopped, signal, guard, (again) => io.abort(again))) return
    stopped = signal
    if (started) stopNow()
  }
  /** Closes down for the stop signal received (once the machine has started). */
  const stopNow = () => {
    // After SIGHUP the terminal is gone: nothing is said.
    if (stopped === 'SIGTERM') output.say('warn', '! SIGTERM: closing the session (send it again to stop at once)')
    if (closing) bound(guard, closing)
    else machine.exit(130)
  }
  // From the start: a signal while the session opens takes effect once it is open (no lock is left behind).
  const removeStop = io.onStop(stop)

  // The host's parts are created below; the machine calls into them only after they exist.
  let slot!: AgentSlot
  let closeRun!: (code: number) => void
  const host: MachineHost = {
    prompt: () => output.prompt(),
    ask: (question, always) => {
      slot.pause()
      output.ask(question, always)
    },
    say: (kind, text) => {
      slot.pause()
      output.say(kind, text)
    },
    followup: (text) => void slot.current.agent.followup(attach(text)),
    steer: (text) => void slot.current.agent.steer(attach(text)),
    cancel: () => slot.current.agent.cancel({ kind: 'user' }),
    command: (text) => runCommand(text, commands),
    close: (code) => closeRun(code),
    abort: () => guard.force(),
    normalExitCode: () => (slot.failed ? 1 : 0),
  }
  const machine = new InteractiveMachine(host)

  const decide = async (request: ApprovalRequest): Promise<ApprovalResponse> => {
    const always = request.scope ? describeScope(request.scope, request.call.name) : undefined
    const answer = await machine.approve(approvalQuestion(request), request.signal, always)
    if (answer.decision === 'allow') return answer.always && request.scope ? { decision: 'allow', remember: request.scope } : 'allow'
    return answer.feedback ? { decision: 'deny', feedback: answer.feedback } : 'deny'
  }
  /** The mode the person chose with /mode: a session opened later (/new, /resume) starts in it too. */
  let chosenMode: PermissionMode = settings.mode
  let app: Awaited<ReturnType<typeof startApp>>
  try {
    app = await startApp(settings, decide, (violation) => output.say('error', `! invariant ${violation.invariant} broken: ${violation.message}`), {
      plugin: io.env.DSH_DEMO_PLUGIN,
    })
  } catch (error) {
    removeStop()
    throw error
  }
  const prices = new PriceTable(settings.prices)
  // A provider /model starts has its own key: it is redacted from then on.
  const models = new ModelSwitch(app.ctx, settings.route, prices, io.env, (route) => redactor.add(routeSecrets(route, io.env)))
  /** The cost meter of the current session (a new one for each session opened). */
  let meter: { id: string; meter: CostMeter } | undefined
  const costOf = (agent: { id: string; session: { events: Parameters<CostMeter['update']>[0] } }) => {
    if (meter?.id !== agent.id) {
      meter = { id: agent.id, meter: new CostMeter(prices) }
      // What earlier runs of a resumed session spent is the session's, not the next turn's.
      meter.meter.update(agent.session.events)
      meter.meter.turnCost()
    }
    meter.meter.update(agent.session.events)
    return meter.meter
  }
  /** `@path` mentions attach files of the workspace; a mention left as text says why. */
  const attach = (text: string) => {
    const expanded = expandMentions(text, settings.cwd)
    for (const note of expanded.notes) output.say('warn', `! ${note}`)
    if (expanded.attached.length) output.say('note', `· attached ${expanded.attached.join(', ')}`)
    return expanded.input
  }
  slot = new AgentSlot(app, output, machine, {
    cwd: settings.cwd,
    agentOptions: settings.reasoningEffort ? { reasoningEffort: settings.reasoningEffort } : {},
    redact,
    onProgress: () => guard.progress(),
    status: (agent) => {
      const mode = app.ctx.permissions.mode(agent)
      const parts = [mode === 'default' ? undefined : `${mode} mode`, contextShare(app.ctx.compaction.status(agent)), costOf(agent).turnCost()].filter(Boolean)
      return parts.length ? parts.join(' · ') : undefined
    },
  })
  try {
    await slot.switchTo(settings.resume)
  } catch (error) {
    removeStop()
    await app.dispose()
    throw error
  }

  const greet = (resumed: boolean) => {
    const agent = slot.current.agent
    // The cost meter starts with the session: what earlier runs spent is not the first turn's.
    costOf(agent)
    const turns = agent.session.position.lastTurn
    const route = settings.route.kind === 'scripted' ? 'offline scripted model' : `${settings.route.provider} at ${redactUrlUserinfo(settings.route.baseUrl)}`
    const { provider, model } = models.current()
    output.line(output.style('bold', `dsh demo · ${route} (${provider}/${model})`))
    if (app.ctx.permissions.mode(agent) !== chosenMode) app.ctx.permissions.setMode(agent, chosenMode, { cause: 'person' })
    output.say(
      'note',
      `session ${agent.id}${resumed ? ` (resumed, ${turns} turn${turns === 1 ? '' : 's'} so far)` : ''} · workspace ${settings.cwd} · saved in ${settings.dataDir} · mode ${app.ctx.permissions.mode(agent)}`,
    )
    const project = app.ctx.permissions.workspaceSettings()
    if (project?.exists && !project.trusted) {
      output.say('warn', `! ${project.file} is not applied: you have not trusted this workspace yet (/trust applies its ${project.rules} rule${project.rules === 1 ? '' : 's'} and remembers it)`)
    }
    for (const line of slot.loadReportLines()) output.say('warn', line)
    const mismatch = cwdMismatch(settings.cwd, agent.session.meta.cwd)
    if (mismatch) output.say('warn', `! ${mismatch}`)
    if (resumed) {
      // On a terminal the last answer is shown in full, rendered (at most RESUME_ANSWER_LINES lines).
      for (const line of transcriptLines(agent.session.events, 3, !output.screen)) output.say('note', line)
      const answer = output.screen ? lastAnswer(agent.session.events) : undefined
      if (answer) showAnswer(output, answer)
    }
  }

  const commands: CommandContext = {
    machine,
    output,
    dataDir: settings.dataDir,
    currentId: () => slot.current.agent.id,
    whenIdle: () => slot.current.agent.whenIdle(),
    listSessions: () => app.ctx.sessionPersistence.list(),
    mode: () => app.ctx.permissions.mode(slot.current.agent),
    setMode: (mode) => {
      if (mode === 'bypass' && settings.mode !== 'bypass') {
        throw new Error('bypass is only available when dsh-demo was started with --mode bypass')
      }
      app.ctx.permissions.setMode(slot.current.agent, mode, { cause: 'person' })
      chosenMode = mode
    },
    trust: () => app.ctx.permissions.trustWorkspace(),
    mcp: () => mcpLines(app.ctx, slot.current.agent),
    tasks: (args) => tasksCommand(app.ctx, slot.current.agent, args),
    models: () => models.lines(),
    switchModel: (spec) => models.switchTo(spec),
    cost: () => costLines(costOf(slot.current.agent)),
    compact: async (instructions) => skippedLine(await app.ctx.compaction.compact(slot.current.agent, instructions ? { instructions } : {})),
    switchTo: async (resume) => {
      try {
        await slot.switchTo(resume)
      } catch (error) {
        output.say('error', `✗ ${describeError(error)}`)
        return
      }
      greet(resume !== undefined)
      if (resume !== undefined) input?.editor.remember(promptHistory(slot.current.agent.session.events))
    },
  }

  // On a terminal, Up recalls what was entered in earlier runs too (<data dir>/prompt-history).
  const history = screen ? new PromptHistoryFile(settings.dataDir, (line) => output.say('warn', line), redact) : undefined
  const saved = history ? await history.load() : []

  // Input is read only from here on: lines typed earlier wait in the stream. A terminal gets the
  // line editor below the output; a pipe is read a line at a time.
  const input = screen
    ? new TerminalInput(io.stdin as unknown as RawInput, io.stdout, output.screen!, [...saved, ...promptHistory(slot.current.agent.session.events)], {
        line: (text) => {
          history?.add(text)
          onLine(text)
        },
        interrupt: () => interrupt(),
        end: () => machine.inputEnd(),
        // Closing the terminal ends its input, often before SIGHUP arrives: the same close, the same end.
        gone: () => gone(),
      })
    : undefined
  const rl = input ? undefined : createInterface({ input: io.stdin, output: tty ? (io.stdout as NodeJS.WritableStream) : undefined, terminal: tty, prompt: '> ' })
  if (rl) output.attach(rl)
  if (input) output.attachInput(input)

  closeRun = (code) => {
    slot.pause()
    output.finish()
    rl?.close()
    const close = async () => {
      if (machine.turnOpen) slot.current.agent.cancel({ kind: 'user' })
      try {
        await slot.closeCurrent()
      } finally {
        await app.dispose()
        await history?.flush()
      }
    }
    // Only an exit the person forced with Ctrl-C (or a stop signal) is bounded; /exit and the end of input wait for the close.
    closing = close()
    const bounded = code === 130 || interrupted || stopped ? guard.close(() => closing!) : closing
    bounded.then(
      () => finished(stopped ? (slot.failed ? 1 : stopped) : code === 0 && slot.failed ? 1 : code),
      (error: unknown) => {
        output.say('error', `✗ ${describeError(error)}`)
        finished(code === 0 || stopped ? 1 : code)
      },
    )
  }

  const interrupt = () => {
    interrupted = true
    machine.interrupt()
  }
  const onLine = (raw: string) => {
    output.entered()
    // On a piped stdin, Ctrl-C arrives as a byte; it was handled as an interrupt already.
    machine.line(raw.replaceAll('\x03', '').trim())
  }
  rl?.on('line', onLine)
  rl?.on('SIGINT', interrupt)
  rl?.on('close', () => machine.inputEnd())
  /** The terminal was closed: its input ended (often before SIGHUP arrives) or failed. */
  const gone = () => {
    io.hangUp()
    stop('SIGHUP')
  }
  if (rl && tty) {
    // readline turns the end into a close (the end of input) and fails restoring the closed terminal (EIO).
    io.stdin.once('end', gone)
    rl.on('error', gone)
  }
  input?.start()
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
  started = true
  // A stop signal that came while the session was opening.
  if (stopped) stopNow()
  try {
    return await done
  } finally {
    removeInterrupt()
    removeStop()
    io.stdin.off('data', onData)
  }
}
