#!/usr/bin/env node
/**
 * Packs every public package under `packages/` with `pnpm pack` (as a release
 * would) and checks the manifest inside each tarball: what a user installs.
 *
 *   node scripts/pack-check.mjs [--keep DIR]
 *
 * Run it after `pnpm build` (the tarballs carry `dist/`). Exit code 0 when
 * every tarball is publishable, 1 with one line per problem otherwise. With
 * `--keep DIR` the tarballs are left in DIR (the consumer test installs them).
 *
 * A packed manifest must not name the `dsh-source` export condition (it
 * points at `src/`, which is not in the tarball) nor keep a `workspace:`
 * range, must say who publishes it and where it lives (`publishConfig.access`,
 * `repository`, `homepage`, `bugs`, `license`, `engines.node`), and every file
 * its `exports`, `main`, `types` and `bin` name must be in the tarball, and
 * the tarball must carry the license text (`LICENSE`, the repository's own,
 * byte for byte) and a `README.md`.
 * Packages are found by directory, so a new package is checked without
 * registering it anywhere; `private` packages are never published and are
 * skipped (and said so).
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** A license file at the tarball's root, the names npm always packs. */
const LICENSE_FILE = /^(LICEN[CS]E|COPYING)(\.(md|txt))?$/i

/** The private export condition under which packages resolve to their TypeScript sources inside the repository. */
export const SOURCE_CONDITION = 'dsh-source'

/** The lowest Node major the packages support; `engines.node` must say `>=` it. */
export const NODE_FLOOR = '>=20'

const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies']

/**
 * Every package directory under `packages/<group>/<name>` that has a package.json, relative to `root`.
 * @param {string} [root]
 * @returns {string[]}
 */
export function packageDirs(root = ROOT) {
  const dirs = []
  const base = join(root, 'packages')
  for (const group of readdirSync(base, { withFileTypes: true })) {
    if (!group.isDirectory()) continue
    for (const name of readdirSync(join(base, group.name), { withFileTypes: true })) {
      if (!name.isDirectory()) continue
      const dir = `packages/${group.name}/${name.name}`
      try {
        readFileSync(join(root, dir, 'package.json'))
        dirs.push(dir)
      } catch {
        // A directory without a manifest (being created) is not a package yet.
      }
    }
  }
  return dirs.sort()
}

/**
 * Every condition path in an `exports` value, as `[conditions…, target]` lists.
 * @param {unknown} value
 * @param {string[]} [path]
 * @returns {{ conditions: string[], target: string | null }[]}
 */
export function exportTargets(value, path = []) {
  if (value === null) return [{ conditions: path, target: null }]
  if (typeof value === 'string') return [{ conditions: path, target: value }]
  if (Array.isArray(value)) return value.flatMap((item) => exportTargets(item, path))
  if (typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => exportTargets(item, [...path, key]))
  return []
}

/** @param {string} file */
function normalize(file) {
  return file.replace(/^\.\//, '')
}

/**
 * What is wrong with a manifest as it would be published: `manifest` is the
 * package.json inside the tarball, `files` the paths in the tarball (relative
 * to its `package/` directory). Returns one sentence per problem; none means
 * publishable.
 * @param {Record<string, any>} manifest
 * @param {readonly string[]} files
 * @returns {string[]}
 */
export function manifestProblems(manifest, files) {
  const problems = []
  const present = new Set(files.map(normalize))
  const targets = exportTargets(manifest.exports)

  for (const { conditions } of targets) {
    if (conditions.includes(SOURCE_CONDITION) || conditions.includes('source')) {
      const condition = conditions.includes(SOURCE_CONDITION) ? SOURCE_CONDITION : 'source'
      problems.push(`exports[${conditions.map((c) => JSON.stringify(c)).join('][')}] keeps the "${condition}" condition: publishConfig.exports must list the published exports without it`)
    }
  }
  for (const field of DEPENDENCY_FIELDS) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (String(range).startsWith('workspace:')) problems.push(`${field}["${name}"] is "${range}": a workspace: range cannot be installed outside the repository`)
    }
  }

  if (manifest.exports === undefined) problems.push('no "exports"')
  if (manifest.publishConfig?.access !== 'public') problems.push('publishConfig.access is not "public" (a scoped package would be published restricted)')
  if (typeof manifest.license !== 'string' || manifest.license === '') problems.push('no "license"')
  if (typeof manifest.types !== 'string') problems.push('no "types"')
  if (!Array.isArray(manifest.files) || manifest.files.length === 0) problems.push('no "files" list (the tarball would take everything not ignored)')
  if (![...present].some((file) => LICENSE_FILE.test(file))) problems.push('no LICENSE file in the tarball (the license\'s text must ship with the code: copy the repository\'s LICENSE into the package folder)')
  if (!present.has('README.md')) problems.push('no README.md in the tarball')
  if (manifest.engines?.node !== NODE_FLOOR) problems.push(`engines.node is ${JSON.stringify(manifest.engines?.node)}, expected "${NODE_FLOOR}"`)
  if (typeof manifest.repository?.url !== 'string' || typeof manifest.repository?.directory !== 'string') problems.push('repository needs "url" and "directory" (a registry page links the package\'s folder)')
  if (typeof manifest.homepage !== 'string') problems.push('no "homepage"')
  if (typeof manifest.bugs?.url !== 'string') problems.push('no "bugs.url"')

  const named = [
    ...targets.filter(({ conditions }) => !conditions.includes(SOURCE_CONDITION)).map(({ conditions, target }) => ({ what: `exports[${conditions.map((c) => JSON.stringify(c)).join('][')}]`, target })),
    { what: 'main', target: manifest.main },
    { what: 'types', target: manifest.types },
    ...Object.entries(typeof manifest.bin === 'string' ? { [manifest.name]: manifest.bin } : (manifest.bin ?? {})).map(([name, target]) => ({ what: `bin["${name}"]`, target })),
  ]
  for (const { what, target } of named) {
    if (typeof target !== 'string' || target.includes('*')) continue
    if (!present.has(normalize(target))) problems.push(`${what} names ${target}, which is not in the tarball${target.includes('dist/') ? ' (run pnpm build first)' : ''}`)
  }
  for (const file of present) {
    if (file.startsWith('src/') && !(manifest.files ?? []).includes('src')) problems.push(`the tarball holds ${file} although "files" does not list src`)
  }
  return problems
}

/** @param {string} command @param {readonly string[]} args @param {string} cwd */
function run(command, args, cwd = ROOT) {
  return new Promise((resolveRun, reject) => {
    execFile(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${(stderr || error.message).trim().split('\n').slice(-5).join('\n')}`))
      else resolveRun(stdout)
    })
  })
}

/**
 * @typedef {object} PackedPackage
 * @property {string} dir the package directory, relative to the repository
 * @property {string} name
 * @property {string} tarball absolute path of the .tgz
 * @property {Record<string, any>} manifest the package.json inside the tarball
 * @property {string[]} files the paths in the tarball, relative to `package/`
 */

/**
 * Packs every public package into `destination` with the pinned pnpm, in one
 * recursive `pnpm pack` (pnpm rewrites `workspace:` ranges and applies
 * `publishConfig` as `pnpm publish` would), and reads each tarball back.
 * Private packages are packed by pnpm too but left out of the answer (their
 * tarballs are removed).
 * @param {string} destination
 * @param {{ root?: string, log?: (line: string) => void }} [options]
 * @returns {Promise<{ packed: PackedPackage[], skipped: { dir: string, name: string }[] }>}
 */
export async function packAll(destination, options = {}) {
  const root = options.root ?? ROOT
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`))
  mkdirSync(destination, { recursive: true })
  const packages = packageDirs(root).map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) }))
  const skipped = packages.filter((pkg) => pkg.manifest.private === true).map(({ dir, manifest }) => ({ dir, name: manifest.name }))
  const filters = packages.flatMap(({ dir }) => ['--filter', `./${dir}`])
  const answer = JSON.parse(await run('npx', ['-y', 'pnpm@12.4.2', '-r', ...filters, 'pack', '--pack-destination', destination, '--json'], root))
  const byName = new Map((Array.isArray(answer) ? answer : [answer]).map((entry) => [entry.name, resolve(root, entry.filename)]))
  const packed = []
  for (const { dir, manifest: source } of packages) {
    const tarball = byName.get(source.name)
    if (tarball === undefined) throw new Error(`pnpm pack made no tarball for ${dir} (${source.name})`)
    if (source.private === true) {
      rmSync(tarball, { force: true })
      continue
    }
    const unpacked = mkdtempSync(join(tmpdir(), 'dsh-pack-'))
    try {
      await run('tar', ['-xzf', tarball, '-C', unpacked])
      const manifest = JSON.parse(readFileSync(join(unpacked, 'package/package.json'), 'utf8'))
      const files = (await run('tar', ['-tzf', tarball])).split('\n').filter((line) => line !== '' && !line.endsWith('/')).map((line) => line.replace(/^package\//, ''))
      packed.push({ dir, name: manifest.name, tarball, manifest, files })
      log(`packed ${dir} (${files.length} files)`)
    } finally {
      rmSync(unpacked, { recursive: true, force: true })
    }
  }
  return { packed, skipped }
}

/** Whether a package folder's LICENSE is the repository's, byte for byte. @param {string} dir */
function sameLicense(dir) {
  try {
    return readFileSync(join(ROOT, dir, 'LICENSE')).equals(readFileSync(join(ROOT, 'LICENSE')))
  } catch {
    return false
  }
}

async function main() {
  const { values } = parseArgs({ options: { keep: { type: 'string' } } })
  const destination = values.keep ? resolve(values.keep) : mkdtempSync(join(tmpdir(), 'dsh-tarballs-'))
  try {
    const { packed, skipped } = await packAll(destination)
    for (const { dir, name } of skipped) console.log(`skip ${dir} (${name} is private)`)
    let failed = 0
    for (const pkg of packed) {
      const problems = manifestProblems(pkg.manifest, pkg.files)
      if (!sameLicense(pkg.dir)) problems.push(`${pkg.dir}/LICENSE differs from the repository's LICENSE (copy it again: cp LICENSE ${pkg.dir}/)`)
      if (problems.length === 0) {
        console.log(`ok   ${pkg.dir} (${pkg.name})`)
        continue
      }
      failed++
      for (const problem of problems) console.log(`FAIL ${pkg.dir} (${pkg.name}): ${problem}`)
    }
    if (failed > 0) {
      console.log(`\n${failed} of ${packed.length} packed packages cannot be published as they are; fix their package.json (see docs/contributing.md, "Releasing")`)
      process.exitCode = 1
    } else {
      console.log(`\nall ${packed.length} public packages pack into publishable tarballs${values.keep ? ` (kept in ${destination})` : ''}`)
    }
  } finally {
    if (!values.keep) rmSync(destination, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`pack-check: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
