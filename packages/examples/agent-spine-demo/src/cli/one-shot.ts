import type { AgentHandle } from '@deepseek-ai/dsh-agent'
import type { TurnEndReason } from '@deepseek-ai/dsh-session'
import type { ApprovalRequest } from '@deepseek-ai/dsh-tools'
import { cwdMismatch, openAgent } from './agent-session'
import { describeRequest } from './approval'
import { contextShare } from './compaction-lines'
import { startApp, type DemoApp } from './app'
import { describeError } from './describe-error'
import { ExitGuard, bound, firstStop } from './exit-guard'
import { agentFailure, describeLoadReport, loadReportOf, type AgentFailure } from './failures'
import type { CliIo, RunStatus, StopSignal } from './io'
import { JsonLines } from './json-lines'
import { routeSecrets } from './model-route'
import { Redactor } from './redact'
import type { DemoSettings } from './settings'
import { styleFor } from './style'
import { LineWriter, TurnView } from './turn-view'
import { watchSubagents } from './subagents'

/** Exit status of a one-shot run whose turn ended `reason`. */
export function exitCodeOf(reason: TurnEndReason | undefined, cancelledByUser: boolean): number {
  if (reason === undefined) return 1
  if (reason.kind === 'completed' || reason.kind === 'stopped') return 0
  if (reason.kind === 'aborted' && cancelledByUser) return 130
  return 1
}

/**
 * `dsh-demo -p "<prompt>"`: one prompt, one answer. stdout carries only the
 * answer: the text of the last step that succeeded, written once the turn has
 * ended (a retried attempt's partial text never reaches it). Tool activity,
 * reasoning, retries, errors and the turn summary go to stderr. With
 * `--json`, stdout carries the session events (and the command line's own
 * `agent/error`, `agent/load-report`, `cli/error` lines) and stderr stays
 * quiet. A call the permissions would ask about (a write or a command in
 * the default mode) is denied, with a line on stderr, unless `--yes` answers
 * every question or `--mode`/a rule allows it without asking.
 *
 * Ctrl-C cancels the turn; a second one exits, closing the turn and the log
 * if that can be done within `EXIT_GRACE_MS`; a third ends the process at
 * once. Resolves with the exit status: 0 when the turn completed and the
 * session was saved; 1 when the turn failed, was blocked, or the log could
 * not be saved (`PERSISTENCE_FAILED`, `APPEND_REFUSED`); 130 when the person
 * cancelled.
 *
 * SIGTERM or SIGHUP closes the run down as a second Ctrl-C does (the turn
 * cancelled and ended in the log, the log flushed, the session released;
 * a stuck close is ended after `EXIT_GRACE_MS` without progress, and a
 * second signal ends the process at once), then resolves with the signal, which
 * the process re-raises; with 1 when the session could not be saved.
 */
export async function runOneShot(settings: DemoSettings, io: CliIo): Promise<RunStatus> {
  const errors = new LineWriter(io.stderr)
  const style = styleFor(io.stderr, io.env)
  const redactor = new Redactor(routeSecrets(settings.route, io.env))
  const redact = (text: string) => redactor.redact(text)
  const json = settings.json ? new JsonLines(io.stdout) : undefined
  /** A note on stderr; `--json` keeps stderr quiet. */
  const say = (color: 'yellow' | 'red' | 'dim', text: string) => {
    if (!json) errors.line(style(color, redact(text)))
  }
  // -p never prompts (stdin may be a pipe, a file or nothing): an ask is answered by --yes or denied.
  const decide = async (request: ApprovalRequest) => {
    if (settings.yes) return 'allow' as const
    say('yellow', `! denied ${describeRequest(request)} (-p asks no questions: allow it with --yes, a --mode that allows it, or a rule in ~/.dsh/settings.json)`)
    return 'deny' as const
  }
  // The Ctrl-C ladder: cancel the turn, then exit (closing down within the grace), then end at once.
  // SIGTERM and SIGHUP take its second step at once; a forced end is by the stop signal when one came.
  let stopped: StopSignal | undefined
  const guard = new ExitGuard(() => io.abort(stopped ?? 'SIGINT'))
  let exiting = false
  let exitNow!: () => void
  const exitRequested = new Promise<'exit'>((resolve) => (exitNow = () => resolve('exit')))
  /** The close under way at the end of the run, once it has begun. */
  let closing: Promise<void> | undefined
  const stop = (signal: StopSignal) => {
    if (!firstStop(stopped, signal, guard, (again) => io.abort(again))) return
    stopped = signal
    if (signal === 'SIGTERM') say('yellow', '! SIGTERM: closing the session (send it again to stop at once)')
    exiting = true
    // Before the agent is open, the run sees `stopped` once it is; once closing down, the close is bounded from now on.
    if (closing) bound(guard, closing)
    else exitNow()
  }
  const removeStop = io.onStop(stop)
  let app: DemoApp
  try {
    app = await startApp(settings, decide, (violation) => say('red', `! invariant ${violation.invariant} broken: ${violation.message}`), {
      plugin: io.env.DSH_DEMO_PLUGIN,
    })
  } catch (error) {
    removeStop()
    throw error
  }
  let handle: AgentHandle | undefined
  /** The summary line names the mode when it is not the default, and the share of the model's window in use. */
  const status = () => {
    const mode = handle ? app.ctx.permissions.mode(handle.agent) : settings.mode
    const parts = [mode === 'default' ? undefined : `${mode} mode`, handle ? contextShare(app.ctx.compaction.status(handle.agent)) : undefined].filter(Boolean)
    return parts.length ? parts.join(' · ') : undefined
  }
  const view = json ? undefined : new TurnView({ answer: new LineWriter(io.stdout), notes: errors, style, answerMode: 'final', redact, status })

  let ended: TurnEndReason | undefined
  /** The log stopped being saved: how, once known. */
  let unsaved: AgentFailure | { code: string; message: string } | undefined
  /** `code: message` of the last failed turn, already in its summary line. */
  let summarized: string | undefined
  const report = (failure: AgentFailure) => {
    if (failure.persistence) unsaved ??= failure
    json?.note('agent/error', { turn: failure.turn, ...(failure.step !== undefined ? { step: failure.step } : {}), code: failure.code, message: redact(failure.message) })
    if (`${failure.code}: ${failure.message}` !== summarized) say('red', `✗ ${failure.code}: ${failure.message}`)
  }

  let cancelled = false
  const interrupt = () => {
    if (!handle || guard.started) return io.abort()
    if (closing) {
      // The run is over and closing down: a Ctrl-C now only means "do not wait for it for long".
      bound(guard, closing)
      return
    }
    if (!cancelled) {
      cancelled = true
      say('yellow', '^C cancelling the turn (press Ctrl-C again to exit)')
      return handle.agent.cancel({ kind: 'user' })
    }
    if (!exiting) say('yellow', '^C exiting (press Ctrl-C again to stop at once)')
    exiting = true
    exitNow()
  }
  const removeInterrupt = io.onInterrupt(interrupt)

  let code = 1
  try {
    try {
      handle = await openAgent(
        app.ctx,
        { cwd: settings.cwd, resume: settings.resume, agentOptions: settings.reasoningEffort ? { reasoningEffort: settings.reasoningEffort } : {} },
        {
          onEvent(session, event) {
            if (event.type === 'turn/end') {
              ended = event.data.reason
              if (ended.kind === 'error') summarized = `${ended.failure.code}: ${ended.failure.message}`
            }
            if (json) json.onEvent(session, event)
            else view!.onEvent(event)
          },
          onError: (_agent, turn, step, error) => report(agentFailure(turn, step, error)),
        },
      )
      const agent = handle.agent
      // A subagent's activity goes with the other notes (stderr), under the call that started it.
      watchSubagents(app.ctx, agent, (text) => say('dim', text))
      const loaded = loadReportOf(handle)
      if (loaded) {
        json?.note('agent/load-report', loaded)
        for (const line of describeLoadReport(loaded)) say('yellow', line)
      }
      const mismatch = cwdMismatch(settings.cwd, agent.session.meta.cwd)
      if (mismatch) say('yellow', `! ${mismatch}`)
      // A stop signal that came while the agent was opening: the prompt is not started.
      if (!stopped) agent.followup(settings.prompt!)
      const outcome = stopped ? 'exit' : await Promise.race([agent.whenIdle().then(() => 'idle' as const), exitRequested])
      if (outcome === 'idle') {
        // The loop flushes at each turn's end and reports a failure as `agent/error`; this makes
        // sure, whatever the loop did, that nothing is reported saved that is not on disk.
        try {
          await app.ctx.sessions.flush(agent.session)
        } catch (error) {
          if (!unsaved) {
            unsaved = { code: 'PERSISTENCE_FAILED', message: describeError(error) }
            json?.note('cli/error', { code: unsaved.code, message: redact(unsaved.message) })
            say('red', `✗ ${unsaved.code}: ${unsaved.message}`)
          }
        }
        json?.finish(agent.session)
      }
      code = outcome === 'exit' ? 130 : exitCodeOf(ended, cancelled)
    } finally {
      // After a second Ctrl-C the close may hang on a tool or the log: the guard ends the process then.
      closing = (async () => {
        await handle?.dispose()
        await app.dispose()
      })()
      if (exiting) await guard.close(() => closing!)
      else await closing
    }
    if (handle) {
      const id = handle.agent.id
      if (unsaved) say('red', `✗ session ${id} was not saved completely (${unsaved.code})`)
      else say('dim', `session ${id} (continue it with --resume ${id})`)
    }
    if (stopped) return unsaved ? 1 : stopped
    return unsaved && code === 0 ? 1 : code
  } finally {
    removeInterrupt()
    removeStop()
  }
}
