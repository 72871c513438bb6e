import type { ToolSchema } from '@deepseek-ai/dsh-llm'
import type { PromptSection } from '@deepseek-ai/dsh-system-prompt'
import type { Context } from './cordis'
import type { AgentType } from './types'

/**
 * The system prompt section every child gets after its type's persona: it
 * says what a child's last message is for. Fixed text (no ids, no counters),
 * so children of one type share a cacheable prefix.
 */
export const SUBAGENT_SECTION =
  'You are a subagent: another agent gave you the task in the first message and is waiting for your answer. ' +
  'Work on it with the tools you have, then end with one final message that answers it completely: that message is all the other agent receives of your work, so include what it needs (findings, file paths, what you could not do).'

/** Whether a tool name is on an allow-list of names and globs (`*` matches any run of characters). */
export function allowListMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((pattern) => !pattern.includes('*')))
  const globs = patterns
    .filter((pattern) => pattern.includes('*'))
    .map((pattern) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`))
  return (name) => exact.has(name) || globs.some((glob) => glob.test(name))
}

/** What the child's setup needs to know. */
export interface ChildSetupOptions {
  readonly type: AgentType
  readonly background: boolean
  /** Register the persona section through the child's context (no `sectionFor` at hand). */
  readonly persona: boolean
}

/**
 * A child's allow-list as the service enforces it: the type, its matcher,
 * and the filtered schema arrays (the tools service's array changes only with
 * a registration, so each is filtered once).
 */
export interface AllowList {
  readonly type: AgentType
  readonly allowed: (name: string) => boolean
  readonly filtered: WeakMap<readonly ToolSchema[], readonly ToolSchema[]>
}

/** The allow-list of a type, or undefined when the type allows every tool. */
export function allowListOf(type: AgentType): AllowList | undefined {
  return type.tools ? { type, allowed: allowListMatcher(type.tools), filtered: new WeakMap() } : undefined
}

/** The schemas of `tools` a child with allow-list `list` sees. */
export function allowedSchemas(list: AllowList, tools: readonly ToolSchema[]): readonly ToolSchema[] {
  let kept = list.filtered.get(tools)
  if (!kept) {
    kept = tools.filter((tool) => list.allowed(tool.name))
    list.filtered.set(tools, kept)
  }
  return kept
}

/** The guard's verdict for a call of `name` by a child whose allow-list is `list`. */
export function allowListVerdict(list: AllowList, name: string): { kind: 'deny'; reason: string } | undefined {
  if (list.allowed(name)) return undefined
  const listed = list.type.tools!.length ? list.type.tools!.join(', ') : 'no tools'
  return { kind: 'deny', reason: `${name} is not a tool of this ${list.type.name} subagent (it may use ${listed})` }
}

/** A child's persona: its type's system prompt, then the subagent section (the two texts joined as the assembler joins sections). */
export function personaSection(type: AgentType): PromptSection {
  return { name: 'persona', order: 100, text: `${type.systemPrompt}\n\n${SUBAGENT_SECTION}` }
}

/**
 * Composes a child's scoped context before it is published (R-SUB-2): for a
 * background child, an outermost `tools/pre-execute` listener that turns
 * every `ask` into a denial (nobody is there to answer; a call a rule allows
 * still runs); with `persona`, its persona section as an agent-local section
 * (the fallback when the provider holds no system-prompt service to give it
 * one with `sectionFor`, which needs no Cordis effect). Everything reverts
 * with the child. The allow-list is enforced by the service, keyed by the
 * child's session id: one `system-prompt/assemble` listener keeps only the
 * allowed schemas, one `tools.guard()` refuses a hidden tool called by name.
 * Each registration on a child's scope is a Cordis effect created and
 * revoked per child (two `Error` stack captures each), most of what a child
 * costs beyond a bare agent: a foreground child gets none.
 */
export function setUpChild(ctx: Context, options: ChildSetupOptions): void {
  const { type, background, persona } = options
  if (persona) ctx.systemPrompt.section(personaSection(type))
  if (background) {
    ctx.on(
      'tools/pre-execute',
      async (_invocation, next) => {
        const decision = await next()
        if (decision.kind !== 'ask') return decision
        return {
          kind: 'deny',
          reason:
            'this subagent runs in the background, where nobody can approve a call, so only calls a permission rule allows run here' +
            (decision.reason ? ` (it would have asked: ${decision.reason})` : ''),
        }
      },
      { prepend: true },
    )
  }
}
