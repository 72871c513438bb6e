import { createHash } from 'node:crypto'
import { workspaceError } from './errors'

/**
 * What each agent last saw of each file: the SHA-256 of the whole file when
 * it last read it (`read_file`, any range) or wrote it (`write_file`,
 * `edit_file`). `edit_file`, and `write_file` over an existing file, are
 * refused when the agent has not read the file (`NOT_READ`), or when the
 * file's bytes differ from what it saw (`STALE_FILE`: the person, a
 * formatter or another agent changed it): the model would otherwise edit
 * from a stale picture and overwrite someone's work.
 *
 * Why content and not mtime: a `touch`, a checkout of the same content or a
 * coarse-grained mtime would give false refusals or miss a change made in
 * the same second; hashing a file the tool has in memory anyway is cheap.
 *
 * Agent-local (one agent's read does not let another edit), in memory only
 * (a resumed session reads again before it edits), and forgotten when the
 * agent is disposed.
 */
export class ReadLedger {
  private readonly seen = new Map<string, Map<string, string>>()

  /** Records that `agent` saw `bytes` as the content of the file at `real`. */
  remember(agent: string, real: string, bytes: Uint8Array): void {
    let files = this.seen.get(agent)
    if (!files) this.seen.set(agent, (files = new Map()))
    files.set(real, digest(bytes))
  }

  /** Throws `NOT_READ` or `STALE_FILE` unless `agent` last saw exactly `bytes` at `real`. */
  check(agent: string, real: string, bytes: Uint8Array, shown: string, tool: string): void {
    const known = this.seen.get(agent)?.get(real)
    if (known === undefined) {
      throw workspaceError('NOT_READ', `${tool} refused: you have not read ${shown} yet; read it with read_file first, then ${tool} it`)
    }
    if (known !== digest(bytes)) {
      throw workspaceError(
        'STALE_FILE',
        `${tool} refused: ${shown} changed on disk since you last read it (someone or something else edited it); read it again with read_file, then redo the change`,
      )
    }
  }

  /** Forgets everything `agent` saw. */
  forget(agent: string): void {
    this.seen.delete(agent)
  }
}

function digest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64')
}
