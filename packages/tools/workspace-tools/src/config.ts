import Schema from 'schemastery'

/** The names of the tools this package provides. */
export type WorkspaceToolName = 'read_file' | 'list_dir' | 'glob' | 'grep' | 'write_file' | 'edit_file' | 'shell'

export const WORKSPACE_TOOL_NAMES: readonly WorkspaceToolName[] = Object.freeze(['read_file', 'list_dir', 'glob', 'grep', 'write_file', 'edit_file', 'shell'])

/** How `shell` is confined. */
export type SandboxMode = 'auto' | 'bubblewrap' | 'off'

/** The bounds of what one call reads and returns, so no call floods the context. */
export interface WorkspaceLimits {
  /** The largest file `read_file` and `edit_file` load (bytes). Default 10 MiB. */
  maxFileBytes: number
  /** Lines `read_file` returns when no `limit` is given. Default 2000. */
  readLines: number
  /** Characters of one line `read_file` and `grep` show before cutting it. Default 2000 / 300 for `grep`. */
  maxLineChars: number
  /** Characters of one `read_file`, `grep`, `glob` or `list_dir` result before it is cut (with a note). Default 60,000 (about 15k tokens). */
  maxOutputChars: number
  /** Entries `list_dir` shows. Default 1000. */
  maxListEntries: number
  /** Paths `glob` returns and matching lines (or files) `grep` returns. Default 200. */
  maxResults: number
  /** Directory entries one `glob`/`grep` walk looks at before it stops. Default 100,000. */
  maxWalkEntries: number
  /** Files larger than this are skipped by `grep` (bytes). Default 2 MiB. */
  maxGrepFileBytes: number
}

/** How `shell` runs commands. */
export interface ShellConfig {
  /**
   * `auto` (default): inside bubblewrap when `bwrap` is on the PATH and works,
   * otherwise unconfined (and the tool says so). `bubblewrap`: required; the
   * plugin fails to start without it. `off`: never confined.
   */
  sandbox: SandboxMode
  /** Inside the sandbox, whether commands reach the network. Default false. */
  network: boolean
  /** More absolute directories the sandboxed command may write (e.g. a package cache). Default none. */
  writablePaths: string[]
  /** A command's timeout when the model gives none (ms). Default 120,000. */
  defaultTimeoutMs: number
  /** The longest timeout the model may ask for (ms). Default 600,000. */
  maxTimeoutMs: number
  /** Output kept per command (bytes): its head and its tail, the middle cut with a note. Default 30,000. */
  maxOutputBytes: number
  /** Between the polite stop (SIGTERM) and the forced one (SIGKILL) of a timed-out or cancelled command (ms). Default 2,000. */
  killGraceMs: number
  /**
   * Pass environment variables whose names look like secrets (`*_KEY`,
   * `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, …) to commands. Default false: the
   * model could print them, and they would land in the session log.
   */
  passSecrets: boolean
}

/** The plugin's options. */
export interface WorkspaceToolsConfig {
  /** The directory the tools are confined to; relative to the process's working directory. */
  root: string
  /**
   * Effects whose calls go to `ctx.approval` first (a `tools/pre-execute`
   * listener turns their `allow` into `ask`). Default `['write', 'execute']`.
   * Ignored while a permissions service (`ctx.permissions`) is mounted: it
   * decides and asks instead.
   */
  askBefore: Array<'write' | 'execute'>
  /** Tools not to register. Default none. */
  exclude: WorkspaceToolName[]
  /** Honour `.gitignore` files in `glob` and `grep`. Default true. */
  gitignore: boolean
  /** Directory names `glob` and `grep` never descend into (besides ignored ones). Default `.git`, `node_modules`. */
  skipDirectories: string[]
  limits: WorkspaceLimits
  shell: ShellConfig
}

/** What the plugin is given: the root, and any settings that differ from the defaults. */
export interface WorkspaceToolsOptions extends Partial<Omit<WorkspaceToolsConfig, 'root' | 'limits' | 'shell'>> {
  root: string
  limits?: Partial<WorkspaceLimits>
  shell?: Partial<ShellConfig>
}

export const DEFAULT_LIMITS: Readonly<WorkspaceLimits> = Object.freeze({
  maxFileBytes: 10 * 1024 * 1024,
  readLines: 2000,
  maxLineChars: 2000,
  maxOutputChars: 60_000,
  maxListEntries: 1000,
  maxResults: 200,
  maxWalkEntries: 100_000,
  maxGrepFileBytes: 2 * 1024 * 1024,
})

export const DEFAULT_SHELL: Readonly<ShellConfig> = Object.freeze({
  sandbox: 'auto',
  network: false,
  writablePaths: [],
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  maxOutputBytes: 30_000,
  killGraceMs: 2_000,
  passSecrets: false,
})

const positive = (value: number) => Schema.natural().min(1).default(value)

export const WorkspaceToolsConfig: Schema<WorkspaceToolsOptions, WorkspaceToolsConfig> = Schema.object({
  root: Schema.string().required().description('The directory the tools are confined to.'),
  askBefore: Schema.array(Schema.union(['write', 'execute'] as const))
    .default(['write', 'execute'])
    .description('Effects whose calls ask ctx.approval first (ignored while ctx.permissions is mounted).'),
  exclude: Schema.array(Schema.union([...WORKSPACE_TOOL_NAMES])).default([]).description('Tools not to register.'),
  gitignore: Schema.boolean().default(true).description('Honour .gitignore in glob and grep.'),
  skipDirectories: Schema.array(String).default(['.git', 'node_modules']).description('Directory names glob and grep never enter.'),
  limits: Schema.object({
    maxFileBytes: positive(DEFAULT_LIMITS.maxFileBytes),
    readLines: positive(DEFAULT_LIMITS.readLines),
    maxLineChars: positive(DEFAULT_LIMITS.maxLineChars),
    maxOutputChars: positive(DEFAULT_LIMITS.maxOutputChars),
    maxListEntries: positive(DEFAULT_LIMITS.maxListEntries),
    maxResults: positive(DEFAULT_LIMITS.maxResults),
    maxWalkEntries: positive(DEFAULT_LIMITS.maxWalkEntries),
    maxGrepFileBytes: positive(DEFAULT_LIMITS.maxGrepFileBytes),
  }).default({} as WorkspaceLimits),
  shell: Schema.object({
    sandbox: Schema.union(['auto', 'bubblewrap', 'off'] as const).default('auto'),
    network: Schema.boolean().default(false),
    writablePaths: Schema.array(String).default([]),
    defaultTimeoutMs: positive(DEFAULT_SHELL.defaultTimeoutMs),
    maxTimeoutMs: Schema.natural().min(1).max(2 ** 31 - 1).default(DEFAULT_SHELL.maxTimeoutMs),
    maxOutputBytes: Schema.natural().min(256).default(DEFAULT_SHELL.maxOutputBytes),
    killGraceMs: Schema.natural().default(DEFAULT_SHELL.killGraceMs),
    passSecrets: Schema.boolean().default(false),
  }).default({} as ShellConfig),
})
