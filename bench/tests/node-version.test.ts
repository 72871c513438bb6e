/** `--node` naming something that is not a Node binary is refused with a message, never waited for forever. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { nodeVersion } from '../src/lib/machine.ts'

const work = mkdtempSync(join(tmpdir(), 'dsh-bench-node-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

function script(name: string, body: string): string {
  const path = join(work, name)
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

describe.skipIf(process.platform === 'win32')('nodeVersion', () => {
  it('gives up on a binary that does not answer --version', () => {
    const stuck = script('stuck-node', 'exec sleep 100000')
    expect(() => nodeVersion(stuck, 500)).toThrow(`--node ${stuck}: did not answer --version within 0.5 s; give the path of a Node binary`)
  })

  it('refuses a binary that answers something else, and one that fails', () => {
    const other = script('other', 'echo "GNU bash, version 5.2"')
    expect(() => nodeVersion(other)).toThrow(`--node ${other}: answered "GNU bash, version 5.2" to --version, not a Node version`)
    const failing = script('failing', 'exit 3')
    expect(() => nodeVersion(failing)).toThrow(`--node ${failing}: not a Node binary that runs here (Command failed: ${failing} --version)`)
    expect(nodeVersion(script('node-wrapper', `exec '${process.execPath}' "$@"`))).toBe(process.version)
  })
})
