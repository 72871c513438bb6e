// The child of the crash test. It appends `crashLog()` to session `id` and flushes
// after every few events, reporting each completed flush to the parent over IPC
// ({ flushed: <number of durable events> }), until the parent kills it with SIGKILL.
//
// Run with: node --conditions=dsh-source --import tsx crash-writer.ts <directory> <id> [torn]
// With `torn`, it stops after flushing the tool/call of a step's first call, appends half a line to
// the file (what a write cut off by a crash leaves) and reports { torn: true }.
import { appendFileSync } from 'node:fs'
import { Context } from 'cordis'
import { SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '../../src/index.ts'
import { crashLog } from './crash-log.ts'

const [directory, rawId, mode] = process.argv.slice(2) as [string, string, string | undefined]
const id = SessionId(rawId)
const root = new Context()
await root.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 60_000 })
const backend = root.sessionPersistence as JsonlSessionPersistence

let pending: AnySessionEvent[] = []
let count = 0
for (const event of crashLog()) {
  pending.push(event)
  count++
  // Irregular batch sizes, so flushes land at every position inside turns.
  if (pending.length < 1 + (count % 7)) continue
  await backend.append(id, pending)
  pending = []
  await backend.flush(id)
  process.send!({ flushed: count })
  if (mode === 'torn' && count >= 60 && event.type === 'tool/call' && event.data.callId.endsWith('-a')) {
    appendFileSync(backend.fileOf(id), '{"type":"tool/result","seq":' + count + ',"time":17')
    process.send!({ torn: true })
    setInterval(() => {}, 1 << 30)
    break
  }
}
