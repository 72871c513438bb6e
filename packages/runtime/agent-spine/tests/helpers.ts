import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'

const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(prefix = 'dsh-spine-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

// Reading a stored session log back and tracing it: shared with the demo's subprocess tests, in the kit.
export { readJsonlLog as readEvents, traceStoredLog as trace } from '@deepseek-ai/dsh-testkit'
