// A process that writes sessions through dsh-session-postgres, driven over IPC by the
// multi-process tests. Each message is a command; each reply says what happened:
//   { cmd: 'create', id }          create a live session, open a turn and a step, flush
//   { cmd: 'load', id }            load it (taking the lease), go live on the loaded log
//   { cmd: 'chunks', count }       append `count` text chunks to the open step (opening a turn if
//                                  none is open), flush
//   { cmd: 'stream' }              append a chunk and flush, forever, reporting each flush
// Replies: { ok: true, length, repairs? } or { error: code, message }; `stream` sends
// { flushed: length } after each flush. The first message is { ready: holder }.
//
// Run with: DSH_PG_URL=… node --conditions=dsh-source --import tsx session-holder.ts <schema> [leaseTtlMs]
import { Context } from 'cordis'
import Sessions, { SessionId, type Session } from '@deepseek-ai/dsh-session'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import PostgresSessionPersistence from '../../src/index.ts'

const url = process.env.DSH_PG_URL!
const [schema, ttl] = process.argv.slice(2) as [string, string | undefined]
const ctx = new Context()
await ctx.plugin(Sessions)
await ctx.plugin(PostgresSessionPersistence, { url, schema, flushIntervalMs: 60_000, ...(ttl ? { leaseTtlMs: Number(ttl) } : {}) })
const backend = ctx.sessionPersistence as PostgresSessionPersistence
let session: Session | undefined

function openStep(live: Session): void {
  if (live.position.openStep) return
  const turn = live.position.lastTurn + 1
  live.append('turn/start', { turn, trigger: { kind: 'prompt' } })
  live.append('user/message', { message: createUserMessage(`prompt ${turn}`) })
  live.append('step/start', { turn, step: 1 })
}

function chunk(live: Session): void {
  const { turn, step } = live.position.openStep!
  live.append('assistant/chunk', { turn, step, chunk: { type: 'text-delta', index: 0, text: `c${live.events.length}` } })
}

const reply = (message: object) => process.send!(message)
const failure = (error: unknown) => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  const typed = (error as { code?: string }).code === 'FLUSH_FAILED' && cause ? cause : (error as { code?: string; message?: string })
  return { error: typed.code ?? 'UNKNOWN', message: typed.message ?? String(error) }
}

process.on('message', async (command: { cmd: string; id?: string; count?: number }) => {
  try {
    if (command.cmd === 'create') {
      session = ctx.sessions.create(SessionId(command.id!), { cwd: '/work' })
      openStep(session)
      await ctx.sessions.flush(session)
      reply({ ok: true, length: session.events.length })
    } else if (command.cmd === 'load') {
      const loaded = await backend.load(SessionId(command.id!))
      session = ctx.sessions.prepare(SessionId(command.id!), { events: loaded.events })
      ctx.sessions.enter(session)
      reply({ ok: true, length: session.events.length, repairs: loaded.repairs.length })
    } else if (command.cmd === 'chunks') {
      openStep(session!)
      for (let i = 0; i < command.count!; i++) chunk(session!)
      await ctx.sessions.flush(session!)
      reply({ ok: true, length: session!.events.length })
    } else if (command.cmd === 'stream') {
      openStep(session!)
      for (;;) {
        chunk(session!)
        await ctx.sessions.flush(session!)
        reply({ flushed: session!.events.length })
      }
    }
  } catch (error) {
    reply(failure(error))
  }
})
reply({ ready: backend.holder })
