import { z } from 'zod'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { ToolHost } from '../host'
import { loadFile, storeFile } from './file-content'
import { pathArgument } from './path-argument'

/**
 * `write_file`: creates a file, or replaces one the agent has read and that
 * has not changed since (`NOT_READ` / `STALE_FILE` otherwise: see
 * `ReadLedger`). Missing directories are created.
 */
export function writeFileTool(host: ToolHost) {
  return defineTool({
    name: 'write_file',
    description:
      'Create a text file in the workspace, or replace the whole content of one (missing directories are created). ' +
      'To replace an existing file you must have read it first; for a change to part of a file use edit_file.',
    parameters: z.object({
      path: pathArgument(),
      content: z.string().describe('The complete new content of the file'),
    }),
    effect: 'write',
    async execute({ path, content }, run) {
      const resolved = await host.workspace.writable(path)
      const bytes = Buffer.from(content, 'utf8')
      // The check of what the agent saw and the write are one step: another agent's change cannot come between.
      const target = await host.locks.run(resolved.real, async () => {
        // Resolved again under the lock: a file another agent created meanwhile is an existing file now.
        const target = await host.workspace.writable(path)
        const previous = target.exists ? await loadFile(host, target, 'write_file', run.signal) : undefined
        if (previous) host.ledger.check(run.agent.id, target.real, previous, target.shown, 'write_file')
        await storeFile(host, target, bytes, run.agent.id, 'write_file', previous)
        return target
      })
      return `Wrote ${bytes.length} bytes to ${target.shown}`
    },
  })
}
