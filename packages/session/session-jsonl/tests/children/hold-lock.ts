// A second process that takes session `id` in `directory` and holds it until killed.
// Run with: node --conditions=dsh-source --import tsx hold-lock.ts <directory> <id>
import { Context } from 'cordis'
import { SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '../../src/index.ts'

const [directory, id] = process.argv.slice(2) as [string, string]
const root = new Context()
await root.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 60_000 })
const meta = { type: 'session/meta', seq: 0, time: 1, data: { createdAt: 1, version: 1 } } as AnySessionEvent
await root.sessionPersistence.append(SessionId(id), [meta])
await root.sessionPersistence.flush(SessionId(id))
process.send!({ ready: true })
setInterval(() => {}, 1 << 30)
