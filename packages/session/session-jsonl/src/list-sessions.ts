import { readdir, stat } from 'node:fs/promises'
import type { PersistedSessionInfo, SessionEventMap, SessionId } from '@deepseek-ai/dsh-session'
import { errnoCode, fsError } from './errors'
import { readFirstLine } from './first-line'
import { notADirectory } from './path-state'
import { SESSION_FILE_EXTENSION, isSafeSessionId, sessionPaths } from './session-paths'

type Meta = SessionEventMap['session/meta']

/** How many files `listSessions` inspects at once. */
const LIST_CONCURRENCY = 16

/** A session this process writes but may not have on disk yet: its id and its `session/meta`, once queued. */
export interface UnwrittenSession {
  readonly id: string
  readonly meta: Meta | undefined
}

/**
 * The persisted sessions in `directory`, most recently written first, from
 * each file's first line and its `stat` (no file is read whole), plus the
 * sessions of `writing` not on disk yet. Files that are not sessions are
 * skipped; a missing directory lists nothing.
 */
export async function listSessions(directory: string, writing: Iterable<UnwrittenSession>): Promise<PersistedSessionInfo[]> {
  const infos = new Map<string, PersistedSessionInfo>()
  let names: string[] = []
  try {
    names = await readdir(directory)
  } catch (error) {
    if (errnoCode(error) === 'ENOTDIR') throw notADirectory(directory, error)
    if (errnoCode(error) !== 'ENOENT') throw fsError(error, { operation: 'read', file: directory, doing: 'Listing the session directory' })
  }
  const ids = names
    .filter((name) => name.endsWith(SESSION_FILE_EXTENSION))
    .map((name) => name.slice(0, -SESSION_FILE_EXTENSION.length))
    .filter(isSafeSessionId)
  let next = 0
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++]!
      const info = await inspect(directory, id)
      if (info) infos.set(id, info)
    }
  }
  await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, ids.length) }, worker))
  for (const session of writing) {
    if (!infos.has(session.id) && session.meta) infos.set(session.id, infoOf(session.id, session.meta, Date.now()))
  }
  return [...infos.values()].sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

async function inspect(directory: string, id: string): Promise<PersistedSessionInfo | undefined> {
  const file = sessionPaths(directory, id).file
  try {
    const [line, stats] = await Promise.all([readFirstLine(file), stat(file)])
    if (line === undefined) return undefined
    const event = JSON.parse(line) as { type?: unknown; data?: Partial<Meta> }
    if (event.type !== 'session/meta' || typeof event.data?.createdAt !== 'number') return undefined
    return infoOf(id, event.data as Meta, Math.floor(stats.mtimeMs))
  } catch (error) {
    // Gone meanwhile, or not a file (a directory named like a session): not a session to list.
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'EISDIR') return undefined
    if (error instanceof SyntaxError) return undefined
    throw fsError(error, { operation: 'read', file, doing: `Reading the first line of session "${id}"` })
  }
}

function infoOf(id: string, meta: Meta, updatedAt: number): PersistedSessionInfo {
  const info: PersistedSessionInfo = { id: id as SessionId, createdAt: meta.createdAt, updatedAt }
  if (meta.cwd !== undefined) info.cwd = meta.cwd
  if (meta.parentSession !== undefined) info.parentSession = meta.parentSession
  return info
}
