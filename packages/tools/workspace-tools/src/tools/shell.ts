import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { ShellConfig } from '../config'
import { workspaceError } from '../errors'
import type { ToolHost } from '../host'
import { sandboxArguments, type SandboxStatus } from '../sandbox'
import { runShell, type ShellOutcome } from '../shell-process'
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
 * fresh shell. No background mode yet: processes still running when the
 * command's shell exits are stopped (a background mode comes with
 * `ctx.tasks`).
 *
 * Results: the output, then `[exit code N]` (a failing command is a normal
 * result: the model reads its output). A timeout is a `TIMEOUT` error whose
 * text carries the output so far. A cancel returns what was printed, marked
 * as cancelled: the command may have changed things before it was stopped.
 */
export function shellTool(host: ToolHost, setup: ShellSetup) {
  const { config, sandbox } = setup
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`
  return defineTool({
    name: 'shell',
    description:
      `Run a shell command (${setup.shell.endsWith('bash') ? 'bash' : 'sh'} -c) in the workspace directory; returns its output (stdout and stderr together) and exit code. ` +
      `Times out after ${seconds(config.defaultTimeoutMs)} unless you set timeout_ms (at most ${config.maxTimeoutMs} ms). ` +
      `Output over ${formatBytes(config.maxOutputBytes)} keeps its beginning and end. Each call is a new shell (cd and variables do not carry over); ` +
      'stdin is empty; there is no background mode: processes still running when the command ends are stopped. ' +
      sandboxSentence(sandbox),
    parameters: z.object({
      command: z.string().min(1).describe('The command line'),
      timeout_ms: z.number().int().min(100).max(config.maxTimeoutMs).optional().describe(`Timeout in milliseconds (default ${config.defaultTimeoutMs})`),
    }),
    effect: 'execute',
    // The pipeline's deadline is a backstop behind the command's own timeout and the kill grace.
    timeoutMs: Math.min(2 ** 31 - 1, config.maxTimeoutMs + config.killGraceMs + 30_000),
    async execute({ command, timeout_ms }, run) {
      const root = host.workspace.realRoot
      const argv = sandbox.kind === 'bubblewrap' ? [sandbox.executable, ...sandboxArguments(sandbox, root), setup.shell, '-c', command] : [setup.shell, '-c', command]
      const timeoutMs = timeout_ms ?? config.defaultTimeoutMs
      let outcome: ShellOutcome
      try {
        outcome = await runShell({
          argv,
          cwd: root,
          env: commandEnvironment(config.passSecrets),
          timeoutMs,
          killGraceMs: config.killGraceMs,
          maxOutputBytes: config.maxOutputBytes,
          signal: run.signal,
        })
      } catch (error) {
        throw workspaceError('TOOL_ERROR', `the shell could not start (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`, error)
      }
      const output = outcome.output.endsWith('\n') ? outcome.output.slice(0, -1) : outcome.output
      if (outcome.stopped === 'timeout') {
        throw workspaceError(
          'TIMEOUT',
          `the command timed out after ${seconds(timeoutMs)}; it and every process it started were stopped. ` +
            (output ? `Output so far:\n${output}` : 'It printed nothing.'),
        )
      }
      const lines = [output === '' ? '[no output]' : output]
      if (outcome.stopped === 'cancel') lines.push('[cancelled: the command and every process it started were stopped]')
      else if (outcome.exitCode !== null) lines.push(`[exit code ${outcome.exitCode}]`)
      else lines.push(`[killed by ${outcome.exitSignal}]`)
      if (outcome.leftovers) lines.push('[processes the command left running were stopped: the shell tool has no background mode]')
      return lines.join('\n')
    },
  })
}

/** The process environment for a command: secrets dropped (unless passed on purpose), pagers and colours off. */
function commandEnvironment(passSecrets: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (passSecrets || !SECRET_NAME.test(name))) env[name] = value
  }
  Object.assign(env, { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' })
  return env
}
