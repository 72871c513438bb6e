import type { AgentHandle } from '@deepseek-ai/dsh-agent'
import type { TurnEndReason } from '@deepseek-ai/dsh-session'
import type { ApprovalRequest } from '@deepseek-ai/dsh-tools'
import { cwdMismatch, openAgent } from './agent-session'
import { describeRequest } from './approval'
import { startApp, type DemoApp } from './app'
import type { CliIo } from './io'
import { JsonLines } from './json-lines'
import type { DemoSettings } from './settings'
import { styleFor } from './style'
import { LineWriter, TurnView } from './turn-view'

/** Exit status of a one-shot run whose turn ended `reason`. */
export function exitCodeOf(reason: TurnEndReason | undefined, cancelledByUser: boolean): number {
  if (reason === undefined) return 1
  if (reason.kind === 'completed' || reason.kind === 'stopped') return 0
  if (reason.kind === 'aborted' && cancelledByUser) return 130
  return 1
}

/**
 * `dsh-demo -p "<prompt>"`: one prompt, one answer. The answer streams to
 * stdout and tool activity, reasoning and the turn summary go to stderr (with
 * `--json`, stdout carries the session events and stderr stays quiet). A
 * write is allowed only with `--yes`. SIGINT cancels the turn; a second one
 * exits at once. Resolves with the exit status: 0 when the turn completed, 1
 * when it failed, was blocked or cancelled (130 when the person cancelled it).
 */
export async function runOneShot(settings: DemoSettings, io: CliIo): Promise<number> {
  const errors = new LineWriter(io.stderr)
  const style = styleFor(io.stderr, io.env)
  const decide = async (request: ApprovalRequest) => {
    if (settings.yes) return 'allow' as const
    if (!settings.json) errors.line(style('yellow', `! denied ${describeRequest(request)} (run with --yes to allow writes)`))
    return 'deny' as const
  }
  const app: DemoApp = await startApp(settings, decide, (violation) =>
    errors.line(style('red', `! invariant ${violation.invariant} broken: ${violation.message}`)),
  )
  const json = settings.json ? new JsonLines(io.stdout) : undefined
  const view = json ? undefined : new TurnView({ answer: new LineWriter(io.stdout), notes: errors, style })
  let ended: TurnEndReason | undefined
  let handle: AgentHandle | undefined
  let cancelled = false
  const interrupt = () => {
    if (cancelled || !handle) return io.exit(130)
    cancelled = true
    handle.agent.cancel({ kind: 'user' })
  }
  const removeInterrupt = io.onInterrupt(interrupt)
  try {
    handle = await openAgent(
      app.ctx,
      { cwd: settings.cwd, resume: settings.resume, agentOptions: settings.reasoningEffort ? { reasoningEffort: settings.reasoningEffort } : {} },
      {
        onEvent(session, event) {
          if (event.type === 'turn/end') ended = event.data.reason
          if (json) json.onEvent(session, event)
          else view!.onEvent(event)
        },
      },
    )
    const agent = handle.agent
    const mismatch = cwdMismatch(settings.cwd, agent.session.meta.cwd)
    if (mismatch && !json) errors.line(style('yellow', `! ${mismatch}`))
    agent.followup(settings.prompt!)
    await agent.whenIdle()
    json?.finish(agent.session)
    if (!json) errors.line(style('dim', `session ${agent.id} (continue it with --resume ${agent.id})`))
    return exitCodeOf(ended, cancelled)
  } finally {
    removeInterrupt()
    await handle?.dispose()
    await app.dispose()
  }
}
