import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import Sessions from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import { describePersistenceContract } from '../../../core/session/tests/contract/persistence-contract'

/**
 * The shared contract, on JSONL files. `reopen()` stands for a process that
 * crashed and restarted: it copies the session directory as it is on disk at
 * that moment (what a killed process leaves behind: written bytes, lock files
 * naming a writer that is gone) and mounts a new backend on the copy. The old
 * backend is left running, untouched, so nothing it still had queued can leak
 * into what the new one reads.
 */
describePersistenceContract('jsonl', async () => {
  const work = mkdtempSync(join(tmpdir(), 'dsh-jsonl-contract-'))
  const directory = join(work, 'live')
  const ctx = new Context()
  await ctx.plugin(Sessions)
  const mounted = [ctx.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 60_000 })]
  await mounted[0]
  let restarts = 0
  return {
    backend: ctx.sessionPersistence,
    ctx,
    async reopen() {
      const copy = join(work, `restart-${++restarts}`)
      cpSync(directory, copy, { recursive: true })
      const next = new Context()
      const fiber = next.plugin(JsonlSessionPersistence, { directory: copy, flushIntervalMs: 60_000 })
      mounted.push(fiber)
      await fiber
      return next.sessionPersistence
    },
    async cleanup() {
      for (const fiber of mounted) await fiber.dispose()
      rmSync(work, { recursive: true, force: true })
    },
  }
})
