import { z } from 'zod'
import { compileGlob, isPlain } from './glob'
import type { ShellCommand } from './shell/command'
import { mentions, prefixWords, startsWith, tokensMention } from './shell/prefix'

/** What a rule decides for the calls it matches. */
export type PermissionDecision = 'allow' | 'ask' | 'deny'

/**
 * One rule: calls of the tools matching `tool` (a name or a glob:
 * `edit_file`, `edit_*`, `*`), narrowed by `match`, get `decision`.
 *
 * - `match.path`: the call's `path` (or `file_path`) argument matches this
 *   glob; relative globs are read from the workspace root (`src/**`),
 *   absolute ones (`/etc/**`) against the absolute path; `dir/**` also
 *   matches `dir` itself (a search of the directory reaches all of it). A
 *   call without a path never matches a rule with one.
 * - `match.command`: the call's `command` argument, parsed as a shell
 *   command line. An `allow` matches only when every part of the line
 *   starts with the prefix (or with the prefix of another matching allow
 *   rule) and nothing is redirected into a file: `git status && rm -rf x`
 *   is not `git status`. A `deny` or `ask` matches when any part does
 *   (also behind `sudo`, `env`, `timeout`, `xargs`, … and inside `bash -c`).
 *   A line that cannot be parsed is never allowed by a command rule.
 */
export interface PermissionRule {
  readonly tool: string
  readonly match?: { readonly path?: string; readonly command?: string }
  readonly decision: PermissionDecision
}

/** Where a rule comes from, from the lowest layer to the highest (the layer never changes precedence: deny beats ask beats allow). */
export type RuleLayer = 'defaults' | 'project' | 'user' | 'session' | 'remembered'

/** A rule with its layer (and the file it was read from, for messages). */
export interface LayeredRule {
  readonly layer: RuleLayer
  readonly rule: PermissionRule
  readonly file?: string
}

export const PermissionRuleSchema = z.strictObject({
  tool: z.string().min(1).max(200),
  match: z
    .strictObject({
      path: z.string().min(1).max(4096).optional(),
      command: z.string().max(4096).optional(),
    })
    .optional(),
  decision: z.enum(['allow', 'ask', 'deny']),
})

/** Checks a rule's globs compile; the problem as a sentence, or undefined. */
export function ruleProblem(rule: PermissionRule): string | undefined {
  try {
    compileGlob(rule.tool)
    if (rule.match?.path !== undefined) compileGlob(rule.match.path)
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
  return undefined
}

/** A rule in a few words, for logs and messages: `shell(command: "git status") → allow`. */
export function formatRule(rule: PermissionRule): string {
  const conditions: string[] = []
  if (rule.match?.path !== undefined) conditions.push(`path: ${JSON.stringify(rule.match.path)}`)
  if (rule.match?.command !== undefined) conditions.push(`command: ${JSON.stringify(rule.match.command)}`)
  return `${rule.tool}${conditions.length ? `(${conditions.join(', ')})` : ''} → ${rule.decision}`
}

/** `user rule shell(command: "rm") → deny`. */
export function labelOf(layered: LayeredRule): string {
  return `${layered.layer} rule ${formatRule(layered.rule)}`
}

/** One place a call's path names: relative to the workspace when inside it; its absolute path, and other absolute names of it (the root by its real path). */
export interface PathSpelling {
  readonly relative?: string
  readonly absolute: string
  readonly aliases?: readonly string[]
}

/** What the rules look at in one call. */
export interface CallFacts {
  readonly tool: string
  /**
   * The call's path argument: relative to the workspace when inside it, and
   * absolute (`aliases`: its other absolute names). `resolved` is where it
   * leads once symbolic links are resolved, when that is another place
   * (relative to the workspace's real path when inside it): a deny or ask
   * rule matches when either place matches, an allow rule only when both do.
   */
  readonly path?: PathSpelling & {
    readonly inside: boolean
    readonly resolved?: PathSpelling
  }
  /** The call's `command` argument, parsed, when it has one. */
  readonly command?: ShellCommand
}

/** The rules that decide a call, if any: the first deny, else the first ask, else the allows that cover it. */
export interface RuleMatch {
  readonly decision: PermissionDecision
  readonly rules: readonly LayeredRule[]
}

/**
 * Which rules decide `facts`: any matching `deny` wins, then any matching
 * `ask`, then `allow` when the allow rules cover the call (for a command:
 * every part, each by some allow rule, and no write redirection). Layers and
 * specificity do not matter. Undefined when no rule decides.
 */
export function matchRules(rules: readonly LayeredRule[], facts: CallFacts): RuleMatch | undefined {
  const relevant = rules.filter((layered) => toolMatches(layered.rule.tool, facts.tool))
  for (const decision of ['deny', 'ask'] as const) {
    const hit = relevant.find((layered) => layered.rule.decision === decision && pathMatches(layered.rule, facts, 'some') && restrictiveCommandMatches(layered.rule, facts))
    if (hit) return { decision, rules: [hit] }
  }
  const allows = relevant.filter((layered) => layered.rule.decision === 'allow' && pathMatches(layered.rule, facts, 'every'))
  const whole = allows.find((layered) => layered.rule.match?.command === undefined)
  if (whole) return { decision: 'allow', rules: [whole] }
  const byCommand = allows.filter((layered) => layered.rule.match?.command !== undefined)
  const command = facts.command
  if (!byCommand.length || command?.kind !== 'parsed' || command.writes.length > 0 || command.parts.length === 0) return undefined
  const used: LayeredRule[] = []
  for (const part of command.parts) {
    const cover = byCommand.find((layered) => startsWith(part, prefixWords(layered.rule.match!.command!)))
    if (!cover) return undefined
    if (!used.includes(cover)) used.push(cover)
  }
  return { decision: 'allow', rules: used }
}

function toolMatches(glob: string, tool: string): boolean {
  return isPlain(glob) ? glob === tool : compileGlob(glob).matches(tool)
}

/**
 * A rule's path condition against the call's path as written and, when it
 * leads elsewhere, as resolved: `some` for deny and ask (either spelling
 * matches), `every` for allow (both must).
 */
function pathMatches(rule: PermissionRule, facts: CallFacts, spellings: 'some' | 'every'): boolean {
  const glob = rule.match?.path
  if (glob === undefined) return true
  const path = facts.path
  if (!path) return false
  const relativeGlob = glob.startsWith('/') ? undefined : glob.replace(/^\.\//, '')
  // `dir/**` covers `dir` itself too: a grep or list_dir of the directory reaches everything under it.
  const directory = /^(.+)\/\*\*$/.exec(relativeGlob ?? glob)?.[1]
  const test = (text: string) => compileGlob(relativeGlob ?? glob).matches(text) || (directory !== undefined && compileGlob(directory).matches(text))
  const matches = (spelling: PathSpelling) =>
    relativeGlob === undefined ? test(spelling.absolute) || (spelling.aliases ?? []).some(test) : spelling.relative !== undefined && test(spelling.relative)
  const all = path.resolved ? [path, path.resolved] : [path]
  return spellings === 'some' ? all.some(matches) : all.every(matches)
}

/** A deny or ask rule's command condition: any part mentions the prefix (rough tokens when unparsed). */
function restrictiveCommandMatches(rule: PermissionRule, facts: CallFacts): boolean {
  const prefix = rule.match?.command
  if (prefix === undefined) return true
  const command = facts.command
  if (!command) return false
  const words = prefixWords(prefix)
  if (command.kind === 'unparsed') return tokensMention(command.tokens, words)
  if (words.length === 0) return true
  return command.parts.some((part) => mentions(part, words))
}
