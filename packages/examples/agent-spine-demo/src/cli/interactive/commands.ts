import { isPermissionMode, type PermissionMode, type WorkspaceSettingsStatus } from '@deepseek-ai/dsh-permissions'
import type { PersistedSessionInfo } from '@deepseek-ai/dsh-session'
import { describeError } from '../describe-error'
import { HELP_DETAILS } from '../help-text'
import { sessionTitle } from '../session-titles'
import type { InteractiveMachine } from './machine'
import type { Output } from './output'

export const HELP =
  'Enter sends a message · typing while the agent works steers it · Ctrl-C cancels the turn, twice exits\n' +
  'Commands: /help · /model [provider/model] · /cost · /mode [default|accept-edits|plan] · /trust · /compact [instructions] · /sessions (list saved sessions) · /resume <id> · /new · /mcp (MCP servers) · /tasks [stop [id]] (background tasks) · /exit'

/** What the slash commands act on. */
export interface CommandContext {
  readonly machine: InteractiveMachine
  readonly output: Output
  /** Where the sessions are saved (for the listing's header and the titles). */
  readonly dataDir: string
  /** The id of the current session. */
  currentId(): string
  /** Resolves once the current agent is idle (a turn that just ended may still be flushing). */
  whenIdle(): Promise<void>
  /** The saved sessions. */
  listSessions(): Promise<PersistedSessionInfo[]>
  /** Replaces the current session with a fresh one or the saved session `resume`; says why when it cannot. */
  switchTo(resume: string | undefined): Promise<void>
  /** The current agent's permission mode. */
  mode(): PermissionMode
  /** Sets it (the model is told); throws with a sentence when it cannot be. */
  setMode(mode: PermissionMode): void
  /** Trusts the workspace: its `.dsh/settings.json` rules apply from now on. */
  trust(): Promise<WorkspaceSettingsStatus | undefined>
  /** `/mcp`: the MCP servers the current agent sees, their state and tools, as lines. */
  mcp(): readonly string[]
  /** `/tasks [stop [id]]`: the current agent's background tasks, or a stop of one (all without an id), as lines. */
  tasks(args: string): readonly string[]
  /** `/model`: the current model and the ones to switch to, as lines. */
  models(): readonly string[]
  /** `/model <spec>`: switches the model from the next request on; resolves with the line to print, throws a sentence when it cannot. */
  switchModel(spec: string): Promise<string>
  /** `/cost`: tokens and money of the current session, per model, as lines. */
  cost(): readonly string[]
  /**
   * `/compact [instructions]`: compacts the current agent's history now (after the running turn,
   * if one is); resolves with a line to print when nothing was written (a compaction prints its own).
   */
  compact(instructions: string | undefined): Promise<string | undefined>
}

/** How many sessions `/sessions` lists. */
const LISTED = 20

/** Runs one slash command line. Commands that print come back to the prompt when the machine is idle. */
export async function runCommand(text: string, context: CommandContext): Promise<void> {
  const { machine, output } = context
  const [name, ...args] = text.split(/\s+/)
  const reprompt = () => {
    if (machine.state.name === 'idle') output.prompt()
  }
  switch (name) {
    case '/exit':
    case '/quit':
      // Right after a turn's summary the agent may still be finishing up (running, no turn open): nothing to say then.
      if (!machine.exitWhenIdle() && machine.turnOpen) output.line('· exiting after the running turn (Ctrl-C cancels it)')
      return
    case '/help':
      for (const line of HELP_DETAILS) output.line(line)
      return reprompt()
    case '/model': {
      const spec = text.slice(name!.length).trim()
      if (!spec) for (const line of context.models()) output.line(line)
      else {
        try {
          output.line(await context.switchModel(spec))
        } catch (error) {
          output.say('error', `✗ ${describeError(error)}`)
        }
      }
      return reprompt()
    }
    case '/cost':
      for (const line of context.cost()) output.line(line)
      return reprompt()
    case '/sessions':
      await listSessions(context)
      return reprompt()
    case '/compact': {
      const instructions = text.slice(name!.length).trim() || undefined
      if (machine.turnOpen) output.line('· compacting after the running turn')
      // After the work already entered (a prompt just sent has not opened its turn yet), and before the lines
      // entered after it: a script piped in (a prompt, /compact, a prompt) acts as written.
      machine.holdLines()
      await context.whenIdle().catch(() => undefined)
      const gate = machine.switching()
      try {
        const line = await context.compact(instructions)
        if (line) output.line(line)
      } catch (error) {
        output.say('error', `✗ ${describeError(error)}`)
      } finally {
        gate?.done()
      }
      return gate ? undefined : reprompt()
    }
    case '/mcp':
      for (const line of context.mcp()) output.line(line)
      return reprompt()
    case '/tasks':
      for (const line of context.tasks(text.slice(name!.length))) output.line(line)
      return reprompt()
    case '/mode': {
      const wanted = args[0]
      if (wanted === undefined) {
        output.line(`mode ${context.mode()} (/mode default · /mode accept-edits · /mode plan)`)
        return reprompt()
      }
      if (!isPermissionMode(wanted)) {
        output.say('error', `✗ "${wanted}" is not a mode: default, accept-edits, plan (bypass only with --mode bypass at start)`)
        return reprompt()
      }
      try {
        context.setMode(wanted)
        output.line(`mode ${context.mode()}${machine.turnOpen ? ' (from the next tool call on; the agent is told)' : ' (the agent is told with your next message)'}`)
      } catch (error) {
        output.say('error', `✗ ${describeError(error)}`)
      }
      return reprompt()
    }
    case '/trust': {
      try {
        const status = await context.trust()
        if (!status) output.line('no workspace to trust')
        else if (!status.exists) output.line(`trusted this workspace (it has no ${status.file} yet; its rules will apply when it has)`)
        else output.line(`trusted this workspace: the ${status.rules} rule${status.rules === 1 ? '' : 's'} of ${status.file} apply from now on`)
      } catch (error) {
        output.say('error', `✗ ${describeError(error)}`)
      }
      return reprompt()
    }
    case '/new':
    case '/resume': {
      if (machine.turnOpen) {
        output.say('warn', `a turn is running: wait for it, or cancel it with Ctrl-C, before ${name}`)
        return
      }
      const id = name === '/resume' ? args[0] : undefined
      if (name === '/resume' && !id) {
        output.line('usage: /resume <id>   (/sessions lists them)')
        return reprompt()
      }
      if (id === context.currentId()) {
        output.line(`already in session ${id}`)
        return reprompt()
      }
      // The lines after this one belong to the session the switch leaves: they wait for it.
      machine.holdLines()
      // A turn that just ended may still be flushing; let it finish first.
      await context.whenIdle().catch(() => undefined)
      if (machine.state.name !== 'idle') output.say('warn', `a turn is running: wait for it, or cancel it with Ctrl-C, before ${name}`)
      // Not idle: the held lines run now, as entered.
      const switching = machine.switching()
      if (!switching) return
      try {
        await context.switchTo(id)
      } finally {
        switching.done()
      }
      return
    }
    default:
      output.line(`unknown command ${name}; ${HELP.split('\n')[1]}`)
      return reprompt()
  }
}

/** `/sessions`: the newest saved sessions, with when, where and their first prompt. */
async function listSessions(context: CommandContext): Promise<void> {
  const { output, dataDir } = context
  let sessions
  try {
    sessions = await context.listSessions()
  } catch (error) {
    return output.say('error', `✗ ${describeError(error)}`)
  }
  if (sessions.length === 0) return output.line(`no saved sessions in ${dataDir}`)
  sessions.sort((a, b) => b.updatedAt - a.updatedAt)
  const shown = sessions.slice(0, LISTED)
  const titles = await Promise.all(shown.map((info) => sessionTitle(dataDir, info.id)))
  const current = context.currentId()
  output.line(`saved sessions in ${dataDir} (newest first):`)
  shown.forEach((info, index) => {
    const mark = info.id === current ? '*' : ' '
    const title = titles[index] ? `  "${titles[index]}"` : ''
    output.line(`${mark} ${info.id}  updated ${localTime(info.updatedAt)}${info.cwd ? `  ${info.cwd}` : ''}${title}`)
  })
  if (sessions.length > LISTED) output.line(`  … and ${sessions.length - LISTED} older`)
}

function localTime(ms: number): string {
  const date = new Date(ms)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`
}
