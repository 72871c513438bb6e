import Schema from 'schemastery'
import type { McpServerConfig } from './server-config'

/** The plugin's options, with their defaults applied. */
export interface McpConfig {
  /**
   * The global servers, in the `mcpServers` shape (`{ name: { command, args,
   * env } | { url, headers } }`): every agent sees their tools. An entry that
   * is malformed, or names an unset variable, does not stop the others: it is
   * reported as a `failed` server with the reason.
   */
  servers: Record<string, McpServerConfig>
  /** Where `${VAR}` is looked up. Default `process.env`; an embedding app can pass its own. */
  environment?: Record<string, string>
  /** How long the first request of an agent waits for the servers' first connection attempts. Default 10 s. */
  startupTimeoutMs: number
  /** Deadline of one connection attempt (handshake and tool listing). Default 30 s. */
  connectTimeoutMs: number
  /** Deadline of a tool call when the server sets no `timeoutMs`; default: dsh-tools' `defaultTimeoutMs` (2 minutes). */
  toolTimeoutMs?: number
  /** Characters of text one result may give the model (all blocks together). Default 60,000, as the workspace tools' readers. */
  maxOutputChars: number
  /** Bytes of one image in a result. Default 5 MiB. */
  maxImageBytes: number
  /** Characters of a tool description the model sees. Default 2,048. */
  maxDescriptionChars: number
  /** Restarts after a failed attempt or a server that went away. */
  restart: {
    /** The first delay (then doubled each time in a row). Default 1 s. */
    initialDelayMs: number
    /** The longest delay. Default 30 s. */
    maxDelayMs: number
    /** Failed connection attempts in a row before the server is left `failed`. Default 8. */
    maxAttempts: number
  }
}

/** What the plugin is given: everything is optional. */
export type McpOptions = Partial<Omit<McpConfig, 'restart'>> & { restart?: Partial<McpConfig['restart']> }

export const McpConfig: Schema<McpOptions, McpConfig> = Schema.object({
  // Each entry is checked by the plugin itself, so one bad entry fails only that server.
  servers: Schema.dict(Schema.any()).default({}).description('The global servers, in the mcpServers shape.'),
  environment: Schema.dict(Schema.string()).description('Where ${VAR} is looked up (default: the process environment).'),
  startupTimeoutMs: Schema.natural().default(10_000).description('How long the first request waits for the servers to connect.'),
  connectTimeoutMs: Schema.natural().min(1).default(30_000).description('Deadline of one connection attempt.'),
  toolTimeoutMs: Schema.natural().min(1).max(2 ** 31 - 1).description('Deadline of a tool call (default: dsh-tools’ default).'),
  maxOutputChars: Schema.natural().min(100).default(60_000).description('Characters of text one result may give the model.'),
  maxImageBytes: Schema.natural().default(5 * 1024 * 1024).description('Bytes of one image in a result.'),
  maxDescriptionChars: Schema.natural().min(16).default(2048).description('Characters of a tool description the model sees.'),
  restart: Schema.object({
    initialDelayMs: Schema.natural().default(1000),
    maxDelayMs: Schema.natural().default(30_000),
    maxAttempts: Schema.natural().min(1).default(8),
  }).default({ initialDelayMs: 1000, maxDelayMs: 30_000, maxAttempts: 8 }),
}) as Schema<McpOptions, McpConfig>
