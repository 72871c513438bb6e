import { chmodSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ShellConfig } from '../src/config'
import { detectSandbox, SandboxUnavailableError } from '../src/sandbox'
import { tempDir } from './helpers'

const auto: Pick<ShellConfig, 'sandbox' | 'network' | 'writablePaths'> = { sandbox: 'auto', network: false, writablePaths: [] }
const path = process.env.PATH

/** Puts a `bwrap` that runs `script` (sh) first on the PATH: the probe runs it instead of bubblewrap. */
function fakeBwrap(script: string): void {
  const dir = tempDir()
  const file = join(dir, 'bwrap')
  writeFileSync(file, `#!/bin/sh\n${script}\n`)
  chmodSync(file, 0o755)
  process.env.PATH = `${dir}${delimiter}${path}`
}

afterEach(() => {
  process.env.PATH = path
})

describe("the sandbox check under shell.sandbox: 'auto'", () => {
  it('a check that does not finish in time does not fall back to an unconfined shell: the plugin does not start', async () => {
    // Sleeps far longer than the check waits: the check's deadline always comes first.
    fakeBwrap('exec sleep 600')
    const detected = detectSandbox(auto, tempDir(), 200)
    await expect(detected).rejects.toBeInstanceOf(SandboxUnavailableError)
    await expect(detected).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE', message: expect.stringMatching(/did not finish within 0\.2 s.*does not fall back to running unconfined/) })
  })

  it('a bubblewrap that cannot create a sandbox here falls back to an unconfined shell that says why', async () => {
    fakeBwrap('echo "bwrap: No permissions to creating new namespace" >&2\nexit 1')
    expect(await detectSandbox(auto, tempDir(), 600_000)).toEqual({
      kind: 'none',
      reason: 'bubblewrap (bwrap) is installed but cannot create a sandbox here (bwrap: No permissions to creating new namespace)',
    })
  })

  it('a bubblewrap whose check succeeds is used', async () => {
    fakeBwrap('exit 0')
    expect(await detectSandbox(auto, tempDir(), 600_000)).toMatchObject({ kind: 'bubblewrap', network: false, writablePaths: [] })
  })
})
