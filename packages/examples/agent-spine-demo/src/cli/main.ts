import { describeError } from './describe-error'
import { CliError } from './errors'
import { runInteractive } from './interactive/run-interactive'
import { exitBySignal, exitProcess, processIo, type CliIo, type RunStatus } from './io'
import { routeSecrets } from './model-route'
import { runOneShot } from './one-shot'
import { Redactor } from './redact'
import { USAGE, resolveSettings } from './settings'

/**
 * `dsh-demo`: resolves the settings, then runs one prompt (`-p`) or the
 * interactive agent. Resolves with the exit status: 0 success, 1 a failed
 * turn or a failure at run time, 2 a usage or configuration error (nothing
 * was started), 130 a turn cancelled with Ctrl-C; or with `SIGTERM`/`SIGHUP`
 * when that signal stopped the run and the run closed down cleanly (the
 * process then ends by that signal; a close that failed resolves with 1).
 */
export async function main(argv: readonly string[], io: CliIo): Promise<RunStatus> {
  let settings
  try {
    settings = await resolveSettings(argv, io.env, io.cwd)
  } catch (error) {
    if (!(error instanceof CliError)) throw error
    io.stderr.write(`dsh-demo: ${error.message}\n`)
    return 2
  }
  if (settings === 'help') {
    io.stdout.write(`${USAGE}\n`)
    return 0
  }
  try {
    return settings.prompt !== undefined ? await runOneShot(settings, io) : await runInteractive(settings, io)
  } catch (error) {
    const redactor = new Redactor(routeSecrets(settings.route, io.env))
    io.stderr.write(`dsh-demo: ${redactor.redact(describeError(error))}\n`)
    return 1
  }
}

/** Runs the command on the real process and exits with its status (or by its stop signal) once its output is written. */
export async function run(): Promise<void> {
  const status = await main(process.argv.slice(2), processIo())
  if (typeof status === 'number') exitProcess(status)
  else exitBySignal(status)
}
