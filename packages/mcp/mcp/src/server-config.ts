import { McpError } from './errors'
import { expandVariables } from './expand'
import { Redactor } from './redact'

/**
 * A stdio server in the `mcpServers` shape: a command started as a child
 * process that speaks MCP on its standard input and output.
 *
 * The child's environment is the SDK's safe default (`HOME`, `LOGNAME`,
 * `PATH`, `SHELL`, `TERM`, `USER`) plus `env`: the agent's own variables (its
 * API keys) are not passed on unless `env` names them (`"KEY": "${KEY}"`).
 */
export interface StdioServerConfig {
  type?: 'stdio'
  command: string
  args?: string[]
  /** Variables for the child; every value counts as a secret (see `Redactor`). */
  env?: Record<string, string>
  cwd?: string
  /** Deadline of one tool call of this server in milliseconds (default: the plugin's `toolTimeoutMs`, else dsh-tools' default). */
  timeoutMs?: number
  /** Keep the entry but do not start the server. */
  disabled?: boolean
}

/** A Streamable HTTP server in the `mcpServers` shape. */
export interface HttpServerConfig {
  /** `http` (also spelled `streamable-http` or `streamableHttp`); optional when `url` is given. */
  type?: 'http' | 'streamable-http' | 'streamableHttp'
  url: string
  /** Request headers (an `Authorization` token, …); every value counts as a secret. */
  headers?: Record<string, string>
  timeoutMs?: number
  disabled?: boolean
}

/** One entry of `mcpServers`: `${VAR}` and `${VAR:-default}` are expanded in every string. */
export type McpServerConfig = StdioServerConfig | HttpServerConfig

interface ResolvedCommon {
  readonly name: string
  readonly timeoutMs: number | undefined
  readonly disabled: boolean
  /** Hides this server's secrets in everything the package lets out. */
  readonly redactor: Redactor
}

/** A server entry checked and expanded: what a connection is made from. */
export type ResolvedServer =
  | (ResolvedCommon & {
      readonly transport: 'stdio'
      readonly command: string
      readonly args: readonly string[]
      readonly env: Readonly<Record<string, string>>
      readonly cwd: string | undefined
    })
  | (ResolvedCommon & {
      readonly transport: 'http'
      readonly url: string
      readonly headers: Readonly<Record<string, string>>
    })

const HTTP_TYPES = new Set(['http', 'streamable-http', 'streamableHttp'])

/**
 * Checks one `mcpServers` entry and expands its `${VAR}` references from
 * `environment`. Throws `INVALID_CONFIG` naming the server and the field (and,
 * for an unset variable, its name: never a value).
 */
export function resolveServer(name: string, raw: unknown, environment: Readonly<Record<string, string | undefined>>): ResolvedServer {
  const fail = (problem: string): never => {
    throw new McpError('INVALID_CONFIG', `MCP server "${name}": ${problem}`)
  }
  if (typeof name !== 'string' || name.length === 0) fail('a server needs a non-empty name')
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail('the entry must be an object ({ command, args, env } or { url, headers })')
  const entry = raw as Record<string, unknown>
  const secrets: string[] = []
  const missing = new Set<string>()
  const expand = (value: unknown, field: string, secret: boolean): string => {
    if (typeof value !== 'string') fail(`${field} must be a string`)
    const expansion = expandVariables(value as string, environment)
    for (const variable of expansion.missing) missing.add(`${variable} (in ${field})`)
    if (secret) secrets.push(expansion.text, ...expansion.substituted)
    return expansion.text
  }
  const record = (value: unknown, field: string): Record<string, string> => {
    if (value === undefined) return {}
    if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(`${field} must be an object of strings`)
    const out: Record<string, string> = {}
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) out[key] = expand(item, `${field}.${key}`, true)
    return out
  }
  const timeoutMs = entry.timeoutMs
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) {
    fail('timeoutMs must be a positive whole number of milliseconds')
  }
  if (entry.disabled !== undefined && typeof entry.disabled !== 'boolean') fail('disabled must be true or false')
  const type = entry.type
  if (type === 'sse') fail('the legacy SSE transport is not supported; use the server\'s Streamable HTTP endpoint ({ "url": … }) or its stdio command')
  if (type !== undefined && type !== 'stdio' && !HTTP_TYPES.has(type as string)) fail(`unknown type ${JSON.stringify(type)} (stdio or http)`)

  const common = { name, timeoutMs: timeoutMs as number | undefined, disabled: entry.disabled === true }
  let server: ResolvedServer
  if (type === 'stdio' || (type === undefined && entry.command !== undefined)) {
    if (entry.url !== undefined) fail('give either command (stdio) or url (http), not both')
    const command = expand(entry.command, 'command', false)
    if (command.length === 0) fail('command must not be empty')
    if (entry.args !== undefined && !Array.isArray(entry.args)) fail('args must be an array of strings')
    const args = ((entry.args as unknown[] | undefined) ?? []).map((arg, index) => expand(arg, `args[${index}]`, false))
    const env = record(entry.env, 'env')
    const cwd = entry.cwd === undefined ? undefined : expand(entry.cwd, 'cwd', false)
    if (entry.headers !== undefined) fail('headers belong to an http server; a stdio server takes env')
    server = { ...common, transport: 'stdio', command, args, env, cwd, redactor: new Redactor(secrets) }
  } else if (HTTP_TYPES.has(type as string) || entry.url !== undefined) {
    if (entry.command !== undefined) fail('give either command (stdio) or url (http), not both')
    // What `${VAR}` puts into a URL is usually a token in its query: a secret.
    const url = expand(entry.url, 'url', false)
    secrets.push(...expandVariables(entry.url as string, environment).substituted)
    const headers = record(entry.headers, 'headers')
    if (entry.env !== undefined) fail('env belongs to a stdio server; an http server takes headers')
    if (missing.size === 0) checkUrl(url, secrets, fail)
    server = { ...common, transport: 'http', url, headers, redactor: new Redactor(secrets) }
  } else {
    return fail('the entry needs a command (a stdio server) or a url (a Streamable HTTP server)')
  }
  if (missing.size > 0) fail(`${plural(missing.size, 'environment variable')} not set: ${[...missing].join(', ')}`)
  return Object.freeze(server)
}

function checkUrl(url: string, secrets: string[], fail: (problem: string) => never): void {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return fail('url is not a valid URL')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') fail('url must be http:// or https://')
  if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password))
}

function plural(count: number, noun: string): string {
  return count === 1 ? `${noun} is` : `${noun}s are`
}

/**
 * The stand-in of an entry that could not be resolved: it never starts, and
 * its status says why. Its transport is guessed from the entry (`url` → http).
 */
export function unresolvedServer(name: string, raw: unknown): ResolvedServer {
  const entry = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {}
  const common = { name, timeoutMs: undefined, disabled: false, redactor: new Redactor([]) }
  if (entry.url !== undefined || (typeof entry.type === 'string' && HTTP_TYPES.has(entry.type))) return { ...common, transport: 'http', url: '', headers: {} }
  return { ...common, transport: 'stdio', command: '', args: [], env: {}, cwd: undefined }
}
