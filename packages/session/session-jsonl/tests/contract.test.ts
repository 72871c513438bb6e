import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import Sessions from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import { describePersistenceContract } from '@deepseek-ai/dsh-testkit'

/**
 * The shared contract, on JSONL files. `reopen()` stands for a process that
 * crashed and restarted: it copies the session directory as it is on disk at
 * that moment (what a killed process leaves behind: written bytes, lock files
 * naming a writer that is gone) and mounts a new backend on the copy. The old
 * backend is left running, untouched, so nothing it still had queued can leak
 * into what the new one reads. Damage is done to the files of the latest
 * restart (what the backend `reopen()` returned last reads).
 */
describePersistenceContract('jsonl', async () => {
  const work = mkdtempSync(join(tmpdir(), 'dsh-jsonl-contract-'))
  const directory = join(work, 'live')
  const ctx = new Context()
  await ctx.plugin(Sessions)
  const mounted = [ctx.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 60_000 })]
  await mounted[0]
  let restarts = 0
  let current = directory
  const fileOf = (id: string) => join(current, `${id}.jsonl`)
  return {
    backend: ctx.sessionPersistence,
    ctx,
    async reopen() {
      const copy = join(work, `restart-${++restarts}`)
      cpSync(directory, copy, { recursive: true })
      current = copy
      const next = new Context()
      const fiber = next.plugin(JsonlSessionPersistence, { directory: copy, flushIntervalMs: 60_000 })
      mounted.push(fiber)
      await fiber
      return next.sessionPersistence
    },
    damage: {
      tearTail: (id) => appendFileSync(fileOf(id), '{"type":"turn/start","seq":'),
      corruptLastRecord(id) {
        const lines = readFileSync(fileOf(id), 'utf8').split('\n')
        lines[lines.length - 2] = lines.at(-2)!.slice(0, -3) // complete (newline-terminated), no longer JSON
        writeFileSync(fileOf(id), lines.join('\n'))
      },
    },
    async cleanup() {
      for (const fiber of mounted) await fiber.dispose()
      rmSync(work, { recursive: true, force: true })
    },
  }
})
