import { describeError } from './describe-error'
import { CliError } from './errors'
import { runInteractive } from './interactive/run-interactive'
import { exitProcess, processIo, type CliIo } from './io'
import { routeSecrets } from './model-route'
import { runOneShot } from './one-shot'
import { Redactor } from './redact'
import { USAGE, resolveSettings } from './settings'

/**
 * `dsh-demo`: resolves the settings, then runs one prompt (`-p`) or the
 * interactive agent. Resolves with the exit status: 0 success, 1 a failed
 * turn or a failure at run time, 2 a usage or configuration error (nothing
 * was started), 130 a turn cancelled with Ctrl-C.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
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

/** Runs the command on the real process and exits with its status once its output is written. */
export async function run(): Promise<void> {
  const code = await main(process.argv.slice(2), processIo())
  exitProcess(code)
}
