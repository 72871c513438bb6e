import type { WorkspaceToolName } from './config'
import type { SandboxStatus } from './sandbox'
import { plural } from './text'
import { sandboxSentence } from './tools/shell'

/**
 * The question a person is asked about a call of a workspace tool that
 * changes something, e.g. `write 12 bytes to notes.txt`, or `run "npm test"
 * (NOT sandboxed: …)`. Undefined for the tools that only read. The path is
 * the one the model wrote (a call whose path would be refused is never
 * asked about: the body refuses it).
 */
export function describeCall(tool: WorkspaceToolName, args: unknown, sandbox: SandboxStatus): string | undefined {
  const a = (args ?? {}) as Record<string, unknown>
  const text = (key: string) => (typeof a[key] === 'string' ? (a[key] as string) : '')
  switch (tool) {
    case 'write_file':
      return `write ${Buffer.byteLength(text('content'))} bytes to ${text('path')}`
    case 'edit_file': {
      const lines = (value: string) => plural(value === '' ? 0 : value.split('\n').length, 'line')
      return `edit ${text('path')}: replace ${lines(text('old_string'))} with ${lines(text('new_string'))}${a.replace_all === true ? ' (every occurrence)' : ''}`
    }
    case 'shell':
      // Quoted whole: the person approves all of it, and a cut would hide what follows (`…; rm -rf ~`).
      return `run ${JSON.stringify(text('command'))} in the workspace${a.background === true ? ', in the background' : ''}. ${sandboxSentence(sandbox)}`
    default:
      return undefined
  }
}
