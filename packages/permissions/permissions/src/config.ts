import { homedir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { PERMISSION_MODES, type PermissionMode } from './modes'
import type { PermissionRule } from './rules'

/**
 * The built-in defaults layer: reading or writing a `.env` file asks first
 * (they usually hold secrets, and whatever the model reads lands in the
 * session log). Replace it with the `defaults` option (`[]` for none): since
 * an `ask` beats any `allow`, a higher layer cannot lift it.
 */
export const DEFAULT_RULES: readonly PermissionRule[] = Object.freeze([
  Object.freeze({ tool: '*', match: Object.freeze({ path: '**/.env' }), decision: 'ask' as const }),
  Object.freeze({ tool: '*', match: Object.freeze({ path: '**/.env.*' }), decision: 'ask' as const }),
])

/** The user's dsh directory: `~/.dsh` (the user's settings and the trust store live there). */
export function defaultUserDirectory(): string {
  return join(homedir(), '.dsh')
}

/** The plugin's options. */
export interface PermissionsConfig {
  /** The mode every agent starts in. Default `default`. `bypass` needs `allowBypass`. */
  mode: PermissionMode
  /** Whether `bypass` may be chosen (at start or later). Default false: only an explicit flag turns it on. */
  allowBypass: boolean
  /**
   * The workspace root: where `.dsh/settings.json` is read (once trusted),
   * what "inside the workspace" means, and what relative path globs are read
   * against. Default: dsh-workspace-tools' root when it is mounted, else
   * none (no project layer; nothing counts as inside).
   */
  root?: string
  /**
   * The user's dsh directory, holding `settings.json` (the user layer) and
   * `trusted-workspaces.json` (the trust store). Default `~/.dsh`. `false`:
   * no user layer, and trust is kept in memory for this process only.
   */
  userDirectory: string | false
  /** The session layer: rules for this app's run (e.g. from command-line flags). */
  rules: PermissionRule[]
  /** The defaults layer; default `DEFAULT_RULES`. */
  defaults: PermissionRule[]
  /** Tools whose `command` argument is a shell command line (plan mode runs their read-only commands). Default `['shell']`. */
  shellTools: string[]
  /** More command prefixes that count as read-only in plan mode (e.g. `npm ls`). Default none. */
  readOnlyCommands: string[]
  /** Identical failing calls in a turn after which the next identical call is refused. Default 3. */
  repeatLimit: number
  /** Register the `exit_plan_mode` tool. Default true. */
  exitPlanMode: boolean
}

/** What the plugin is given: everything is optional. */
export type PermissionsOptions = Partial<PermissionsConfig>

const Rule: Schema<PermissionRule> = Schema.object({
  tool: Schema.string().required(),
  match: Schema.object({ path: Schema.string(), command: Schema.string() }),
  decision: Schema.union(['allow', 'ask', 'deny'] as const).required(),
}) as Schema<PermissionRule>

export const PermissionsConfig: Schema<PermissionsOptions, PermissionsConfig> = Schema.object({
  mode: Schema.union([...PERMISSION_MODES]).default('default').description('The mode every agent starts in.'),
  allowBypass: Schema.boolean().default(false).description('Whether bypass may be chosen (an explicit flag).'),
  root: Schema.string().description('The workspace root (default: dsh-workspace-tools’ root).'),
  userDirectory: Schema.union([Schema.string(), Schema.const(false)]).default(defaultUserDirectory()).description('The user’s dsh directory (settings.json, trusted-workspaces.json); false for none.'),
  rules: Schema.array(Rule).default([]).description('Session rules.'),
  defaults: Schema.array(Rule)
    .default(DEFAULT_RULES.map((rule) => ({ ...rule, ...(rule.match ? { match: { ...rule.match } } : {}) })))
    .description('The defaults layer (replaces the built-in one).'),
  shellTools: Schema.array(String).default(['shell']).description('Tools whose command argument is a shell command line.'),
  readOnlyCommands: Schema.array(String).default([]).description('More command prefixes that plan mode runs.'),
  repeatLimit: Schema.natural().min(1).default(3).description('Identical failing calls in a turn before the next one is refused.'),
  exitPlanMode: Schema.boolean().default(true).description('Register the exit_plan_mode tool.'),
}) as Schema<PermissionsOptions, PermissionsConfig>
