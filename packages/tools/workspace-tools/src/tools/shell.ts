import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { ShellConfig } from '../config'
import { workspaceError } from '../errors'
import type { ToolHost } from '../host'
import { sandboxArguments, type SandboxStatus } from '../sandbox'
import { OutputBuffer } from '../output-buffer'
import { runShell, type ShellOutcome } from '../shell-process'
import type { ShellTasks } from './shell-tasks'
import { formatBytes } from './format'

/** Environment variable names that look like secrets: not passed to commands unless `passSecrets`. */
const SECRET_NAME = /PASSWORD|PASSWD|SECRET|TOKEN|CREDENTIAL|PRIVATE_KEY|(^|_)(API_?)?KEYS?($|_)/i

/** What `shell` needs besides the host: how commands run here. */
export interface ShellSetup {
  readonly config: ShellConfig
  readonly sandbox: SandboxStatus
  /** The shell executable (`bash` where there is one, else `sh`). */
  readonly shell: string
}

/** One sentence on the sandbox, for the tool's description and the approval prompt. */
export function sandboxSentence(sandbox: SandboxStatus): string {
  if (sandbox.kind === 'bubblewrap') {
    return `Sandboxed (bubblewrap): only the workspace${sandbox.writablePaths.length ? ' and the configured writable paths' : ''} and a private /tmp are writable, the rest of the file system is read-only${sandbox.network ? '' : ', and there is no network'}.`
  }
  return `NOT sandboxed (${sandbox.reason}): the command runs with the full permissions of the user running the agent and can read and change files outside the workspace and use the network.`
}

/**
 * `shell`: one command through `bash -c` in the workspace directory, with a
 * timeout, bounded output (head and tail), its whole process group stopped
 * on timeout or cancel, and the exit code in the result. Each call is a
 * fresh shell; processes still running when the command's shell exits are
 * stopped.
 *
 * Results: the output, then `[exit code N]` (a failing command is a normal
 * result: the model reads its output). A timeout is a `TIMEOUT` error whose
 * text carries the output so far. A cancel returns what was printed, marked
 * as cancelled: the command may have changed things before it was stopped.
 *
 * With `tasks` (`ctx.tasks` is mounted) the tool also takes `background:
 * true`: the command then runs as a task owned by the calling agent (no
 * timeout unless `timeout_ms` is given), the result is its task id at once,
 * and dsh-tasks delivers the output and exit code to the agent's model when
 * the command ends. The command's process group ends with the task: when it
 * is stopped (`task_kill`, the person), or when the agent goes away.
 */
export function shellTool(host: ToolHost, setup: ShellSetup, tasks?: ShellTasks) {
  const { config, sandbox } = setup
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`
  const leftoversNote = tasks
    ? '[processes the command left running were stopped: run a command that must keep running with background: true]'
    : '[processes the command left running were stopped: the shell tool has no background mode]'
  const background = z.boolean().optional().describe('Run it in the background: the result is a task id at once, and the output comes to you as a message when the command ends')
  const parameters = z.object({
    command: z.string().min(1).describe('The command line'),
    timeout_ms: z.number().int().min(100).max(config.maxTimeoutMs).optional().describe(`Timeout in milliseconds (default ${config.defaultTimeoutMs}${tasks ? '; none in the background' : ''})`),
    ...(tasks ? { background } : {}),
  })
  const commandLine = (command: string) => {
    const root = host.workspace.realRoot
    const argv = sandbox.kind === 'bubblewrap' ? [sandbox.executable, ...sandboxArguments(sandbox, root), setup.shell, '-c', command] : [setup.shell, '-c', command]
    return { argv, cwd: root, env: commandEnvironment(config.passSecrets), killGraceMs: config.killGraceMs, maxOutputBytes: config.maxOutputBytes, sandboxed: sandbox.kind === 'bubblewrap' }
  }
  /** Runs a command to its end and says how it ended, as the model reads it. */
  const runToEnd = async (command: string, timeoutMs: number, signal: AbortSignal, output?: OutputBuffer): Promise<string> => {
    let outcome: ShellOutcome
    try {
      outcome = await runShell({ ...commandLine(command), timeoutMs, signal, ...(output ? { output } : {}) })
    } catch (error) {
      throw workspaceError('TOOL_ERROR', `the shell could not start (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`, error)
    }
    const text = outcome.output.endsWith('\n') ? outcome.output.slice(0, -1) : outcome.output
    if (outcome.stopped === 'timeout') {
      throw workspaceError(
        'TIMEOUT',
        `the command timed out after ${seconds(timeoutMs)}; it and every process it started were stopped. ` + (text ? `Output so far:\n${text}` : 'It printed nothing.'),
      )
    }
    const lines = [text === '' ? '[no output]' : text]
    if (outcome.stopped === 'cancel') lines.push('[cancelled: the command and every process it started were stopped]')
    else if (outcome.exitCode !== null) lines.push(`[exit code ${outcome.exitCode}]`)
    else lines.push(`[killed by ${outcome.exitSignal}]`)
    if (outcome.leftovers) lines.push(leftoversNote)
    return lines.join('\n')
  }
  return defineTool({
    name: 'shell',
    description:
      `Run a shell command (${setup.shell.endsWith('bash') ? 'bash' : 'sh'} -c) in the workspace directory; returns its output (stdout and stderr together) and exit code. ` +
      `Times out after ${seconds(config.defaultTimeoutMs)} unless you set timeout_ms (at most ${config.maxTimeoutMs} ms). ` +
      `Output over ${formatBytes(config.maxOutputBytes)} keeps its beginning and end. Each call is a new shell (cd and variables do not carry over); ` +
      (tasks
        ? 'stdin is empty; processes still running when the command ends are stopped. With background: true (a server, a long build) you get a task id at once and the output when it ends. '
        : 'stdin is empty; there is no background mode: processes still running when the command ends are stopped. ') +
      sandboxSentence(sandbox),
    parameters,
    effect: 'execute',
    // The pipeline's deadline is a backstop behind the command's own timeout and the kill grace.
    timeoutMs: Math.min(2 ** 31 - 1, config.maxTimeoutMs + config.killGraceMs + 30_000),
    async execute(args, run) {
      const { command, timeout_ms } = args as { command: string; timeout_ms?: number; background?: boolean }
      if (!(tasks && (args as { background?: boolean }).background)) return runToEnd(command, timeout_ms ?? config.defaultTimeoutMs, run.signal)
      const output = new OutputBuffer(config.maxOutputBytes)
      const task = tasks.start({
        owner: run.agent,
        kind: 'shell',
        title: command,
        callId: String(run.callId),
        output: () => output.text(),
        run: (signal) => runToEnd(command, timeout_ms ?? NO_TIMEOUT_MS, signal, output),
      })
      return (
        `Started background task ${task.id}: the command runs in the background. ` +
        'Its output and exit code will come to you as a message when it ends; carry on meanwhile, and do not wait or poll for it.'
      )
    },
  })
}

/** A background command's timeout when the model sets none: the longest a timer holds (about 24 days). */
const NO_TIMEOUT_MS = 2 ** 31 - 1

/** The process environment for a command: secrets dropped (unless passed on purpose), pagers and colours off. */
function commandEnvironment(passSecrets: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (passSecrets || !SECRET_NAME.test(name))) env[name] = value
  }
  Object.assign(env, { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' })
  return env
}
