import { stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { isPermissionMode, type PermissionMode } from '@deepseek-ai/dsh-permissions'
import { isSafeSessionId } from '@deepseek-ai/dsh-session-jsonl'
import type { SpineConfig } from '@deepseek-ai/dsh-agent-spine'
import type { McpServerConfig } from '@deepseek-ai/dsh-mcp'
import { loadConfigFile } from './config-file'
import { readMcpServers } from './mcp'
import { CliError } from './errors'
import { MAX_TIMER_MS, resolveModelRoute, type ModelRoute } from './model-route'
import type { ModelPrice } from './prices'

export const USAGE = `Usage: dsh-demo [options]

A command-line agent on the dsh spine. Without -p it is interactive.

Options:
  -p, --prompt <text>         run one prompt, print the answer and exit (0 = the turn completed)
      --json                  with -p: write the session events as JSON lines instead of the answer
      --resume <id>           continue a saved session (with -p or interactively)
      --mode <mode>           permission mode: default (writes and commands ask), accept-edits (edits in the
                              workspace run without asking), plan (read-only until you approve a plan), or
                              bypass (nothing asks; only by this flag)
  -y, --yes                   with -p: answer yes to every question a tool call asks (writes, commands, a plan);
                              deny rules and plan mode still refuse. Without it -p denies what would ask
      --cwd <dir>             the workspace the tools may read and write (default: current directory)
      --data-dir <dir>        where sessions are saved (default: ~/.dsh/sessions)
      --config <file>         config file (default: dsh.config.json, .yaml or .yml in the current directory)
      --provider <name>       scripted (default, offline), deepseek, openai, anthropic, deepseek-anthropic (the
                              Anthropic Messages API), or any name with --base-url
      --base-url <url>        API root of an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1
      --model <id>            model id (default: the provider's default model)
      --api-key-env <VAR>     environment variable holding the API key (presets: DEEPSEEK_API_KEY, OPENAI_API_KEY,
                              ANTHROPIC_API_KEY)
      --reasoning-effort <e>  reasoning effort of every request (the model must accept it)
      --chunk-delay-ms <n>    scripted model: wait n ms before each streamed chunk (0 to 2147483647)
      --mcp-config <file>     MCP servers to use, a JSON file in the "mcpServers" shape (stdio commands or
                              Streamable HTTP urls; \${VAR} is read from the environment)
  -h, --help                  show this help

Interactive: Enter sends a message; typing while the agent works steers it; Ctrl-C cancels
the running turn, a second Ctrl-C (or Ctrl-C when idle) exits, a third ends the process at once.
Approval questions: y allows, n (or Enter) denies, a allows the same kind of call for the rest of
the session (when offered), anything else denies and is passed to the agent as your reason.
Commands: /help (keys and commands), /model [provider/model], /cost, /mode [mode], /trust, /compact,
/sessions, /resume <id>, /new, /mcp, /exit. On a terminal: Up/Down recall messages, a trailing \\ (or
Alt-Enter) continues on the next line, and @path attaches a workspace file to the message.
Permission rules: ~/.dsh/settings.json, and .dsh/settings.json in the workspace once you /trust it.`

/** Everything a run needs, resolved from flags over the config file over defaults. */
export interface DemoSettings {
  /** The one-shot prompt (`-p`); interactive without it. */
  prompt: string | undefined
  json: boolean
  resume: string | undefined
  /** Answer yes to every approval question (one-shot mode only). */
  yes: boolean
  /** The permission mode every agent starts in (`--mode`; `bypass` only by that flag). */
  mode: PermissionMode
  /** Absolute directory of the saved sessions. */
  dataDir: string
  /** Absolute workspace directory. */
  cwd: string
  /** The config file that was read, if any. */
  configFile: string | undefined
  route: ModelRoute
  reasoningEffort: string | undefined
  /** The spine bundle's config, with `defaultModel` set to the route. */
  spine: SpineConfig
  /** The MCP servers of `--mcp-config` (or the config file's `mcpConfig`), as the file gives them. */
  mcpServers?: Record<string, McpServerConfig>
  /** The config file's `prices` (by `provider/model`), over the preset models' prices. */
  prices?: Record<string, ModelPrice>
}

const flags = {
  prompt: { type: 'string', short: 'p' },
  json: { type: 'boolean' },
  resume: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  mode: { type: 'string' },
  cwd: { type: 'string' },
  'data-dir': { type: 'string' },
  config: { type: 'string' },
  provider: { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'api-key-env': { type: 'string' },
  'reasoning-effort': { type: 'string' },
  'chunk-delay-ms': { type: 'string' },
  'mcp-config': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/**
 * Parses `argv` (without the node and script paths), reads the config file
 * and resolves the settings; `'help'` when help was asked for. Throws a
 * `CliError` (`INVALID_ARGS`, `INVALID_CONFIG`, `INVALID_MODEL`) whose message
 * names the flag, or the file and field, at fault.
 */
export async function resolveSettings(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, workingDirectory = process.cwd()): Promise<DemoSettings | 'help'> {
  let values: ReturnType<typeof parseFlags>
  try {
    values = parseFlags(argv)
  } catch (error) {
    throw new CliError('INVALID_ARGS', `${describeArgsError(error)} (dsh-demo --help lists the options)`)
  }
  if (values.help) return 'help'
  if (values.prompt !== undefined && values.prompt.trim() === '') throw new CliError('INVALID_ARGS', '-p needs the text of a prompt')
  if (values.json && values.prompt === undefined) throw new CliError('INVALID_ARGS', '--json needs -p: it writes the events of one prompt')
  if (values.resume !== undefined && !isSafeSessionId(values.resume)) {
    throw new CliError('INVALID_ARGS', `--resume: "${values.resume}" is not a session id (ids are 1-200 characters of A-Z a-z 0-9 . _ -)`)
  }
  const chunkDelayMs = values['chunk-delay-ms'] === undefined ? undefined : parseMilliseconds(values['chunk-delay-ms'])
  const mode = values.mode ?? 'default'
  if (!isPermissionMode(mode)) throw new CliError('INVALID_ARGS', `--mode: "${mode}" is not a mode (default, accept-edits, plan, bypass)`)

  const loaded = await loadConfigFile(values.config, workingDirectory)
  const { config } = loaded
  const where = loaded.file ?? 'the command line'
  const base = loaded.file ? dirname(loaded.file) : workingDirectory
  if (config.agents.length) {
    throw new CliError('INVALID_CONFIG', `${where}: field "agents": dsh-demo drives one agent of its own; config agents are for apps that embed the spine`)
  }

  const cwd = values.cwd !== undefined ? resolve(workingDirectory, values.cwd) : config.cwd !== undefined ? resolve(base, config.cwd) : workingDirectory
  if (!(await isDirectory(cwd))) {
    throw new CliError(values.cwd !== undefined ? 'INVALID_ARGS' : 'INVALID_CONFIG', `${values.cwd !== undefined ? '--cwd' : `${where}: field "cwd"`}: ${cwd} is not a directory`)
  }

  const route = resolveModelRoute(
    {
      provider: values.provider ?? config.provider,
      baseUrl: values['base-url'] ?? config.baseUrl,
      model: values.model ?? config.model,
      apiKeyEnv: values['api-key-env'] ?? config.apiKeyEnv,
      defaultModel: config.defaultModel,
      chunkDelayMs,
      scripted: config.scripted,
      openai: config.openai,
    },
    where,
    env,
  )

  const { provider: _p, baseUrl: _b, model: _m, apiKeyEnv: _k, reasoningEffort, dataDir, cwd: _c, scripted: _s, openai: _o, mcpConfig, prices, ...spine } = config
  const mcpServers =
    values['mcp-config'] !== undefined
      ? await readMcpServers(resolve(workingDirectory, values['mcp-config']), 'INVALID_ARGS')
      : mcpConfig !== undefined
        ? await readMcpServers(resolve(base, mcpConfig), 'INVALID_CONFIG')
        : undefined
  return {
    prompt: values.prompt,
    json: values.json ?? false,
    resume: values.resume,
    yes: values.yes ?? false,
    mode,
    dataDir:
      values['data-dir'] !== undefined
        ? expand(nonEmpty(values['data-dir'], 'INVALID_ARGS', '--data-dir'), workingDirectory)
        : dataDir !== undefined
          ? expand(nonEmpty(dataDir, 'INVALID_CONFIG', `${where}: field "dataDir"`), base)
          : join(homedir(), '.dsh', 'sessions'),
    cwd,
    configFile: loaded.file,
    route,
    reasoningEffort: values['reasoning-effort'] ?? reasoningEffort,
    spine: { ...spine, defaultModel: { provider: route.provider, model: route.model } },
    ...(mcpServers !== undefined ? { mcpServers } : {}),
    ...(prices && Object.keys(prices).length > 0 ? { prices } : {}),
  }
}

function parseFlags(argv: readonly string[]) {
  // `pnpm demo -- -p x` hands the script a leading `--` (npm strips it): it separates the runner's
  // options from ours, not ours from positionals.
  const args = argv[0] === '--' ? argv.slice(1) : [...argv]
  const { values, positionals } = parseArgs({ args, options: flags, strict: true, allowPositionals: true })
  if (positionals.length) throw new Error(`unexpected argument "${positionals[0]}": pass a prompt with -p "<text>"`)
  return values
}

/** Node's parseArgs messages carry advice about `--`; keep the part a person needs. */
function describeArgsError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const unknown = /^Unknown option '([^']+)'/.exec(message)
  if (unknown) return `unknown option ${unknown[1]}`
  const missing = /^Option '([^']+)' argument missing/.exec(message)
  if (missing) return `${flagName(missing[1]!)} needs a value`
  const ambiguous = /^Option '([^']+)' argument is ambiguous/.exec(message)
  if (ambiguous) return `${flagName(ambiguous[1]!)} needs a value (write a value that starts with "-" as ${flagName(ambiguous[1]!)}=<value>)`
  return message.split('\n')[0]!
}

/** `-p, --prompt <value>` → `--prompt`. */
function flagName(spelled: string): string {
  return spelled.replace(/^-\w, /, '').replace(/ <value>$/, '')
}

function parseMilliseconds(text: string): number {
  if (!/^\d+$/.test(text.trim())) throw new CliError('INVALID_ARGS', `--chunk-delay-ms: expected a whole number of milliseconds, got "${text}"`)
  const value = Number(text)
  if (value > MAX_TIMER_MS) throw new CliError('INVALID_ARGS', `--chunk-delay-ms: ${text.trim()} is out of range (0 to ${MAX_TIMER_MS} ms, the longest delay a timer can wait)`)
  return value
}

function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  )
}

/**
 * A data directory that names something: an empty one would resolve to the
 * base directory (the workspace), putting the sessions among its files.
 */
function nonEmpty(path: string, code: 'INVALID_ARGS' | 'INVALID_CONFIG', what: string): string {
  if (path.trim() === '') throw new CliError(code, `${what} is empty: name the directory of the saved sessions (default ~/.dsh/sessions)`)
  return path
}

/** A directory argument: `~` is the home directory; relative paths are resolved against `base`. */
function expand(path: string, base: string): string {
  if (path === '~') return homedir()
  if (path.startsWith('~/')) return join(homedir(), path.slice(2))
  return resolve(base, path)
}
