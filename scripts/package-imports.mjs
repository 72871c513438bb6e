#!/usr/bin/env node
// Checks that packages meet only through their names: no file of a package
// (its tests above all) imports another package's `tests/` folder, by a
// relative path or by a `@scope/name/tests/…` subpath, and none reaches into
// another package's folder by a relative path. Shared test code lives in
// @deepseek-ai/dsh-testkit (packages/support/testkit); a package's sources are
// imported by its name. Also checks that the workspace packages' dependencies
// and peerDependencies form no cycle: the test kit's devDependency cycles are
// allowed (pnpm-workspace.yaml sets ignoreWorkspaceCycles for them), a cycle
// that a build would have to order is not. Exits 1 and lists file:line for
// each import, and each cycle, that breaks a rule.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Directories never scanned: dependencies and builds. */
const SKIP_DIRS = new Set(['node_modules', 'dist', 'coverage', '.git'])
const CODE_FILE = /\.(?:[cm]?[jt]sx?)$/

/**
 * Blanks out comments (keeping every newline, so line numbers hold): an import
 * quoted in a doc comment is not an import. A `//` right after a `:` or inside
 * a quote (a URL in a string) is not a comment.
 */
export function withoutComments(text) {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:'"`\\])\/\/[^\n]*/gm, (match, before) => before + ' '.repeat(match.length - before.length))
}

const IMPORT_PATTERNS = [
  // import … from 'x', export … from 'x' (over several lines too)
  /\b(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"\n]+)\1/g,
  // import 'x' (for its side effects)
  /\bimport\s*(['"])([^'"\n]+)\1/g,
  // import('x')
  /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g,
]

/** Every module specifier `text` imports, with the 1-based line it is on, in order. */
export function importsOf(text) {
  const code = withoutComments(text)
  const found = new Map()
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of code.matchAll(pattern)) {
      const at = match.index + match[0].lastIndexOf(match[2])
      found.set(at, { specifier: match[2], line: code.slice(0, at).split('\n').length })
    }
  }
  return [...found.entries()].sort(([a], [b]) => a - b).map(([, entry]) => entry)
}

/** The package directories (`packages/<group>/<name>`, relative to `root`). */
export function packageDirs(root) {
  const base = join(root, 'packages')
  if (!existsSync(base)) return []
  const dirs = []
  for (const group of readdirSync(base).sort()) {
    if (!statSync(join(base, group)).isDirectory()) continue
    for (const name of readdirSync(join(base, group)).sort()) {
      if (existsSync(join(base, group, name, 'package.json'))) dirs.push(['packages', group, name].join('/'))
    }
  }
  return dirs
}

function codeFiles(dir) {
  const out = []
  for (const entry of readdirSync(dir).sort()) {
    if (SKIP_DIRS.has(entry)) continue
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) out.push(...codeFiles(path))
    else if (CODE_FILE.test(entry) && !entry.endsWith('.d.ts')) out.push(path)
  }
  return out
}

const posix = (path) => path.split(sep).join('/')

/**
 * What is wrong with importing `specifier` from `file` (both relative to
 * `root`; `file` inside package `own`), or `undefined`.
 */
export function importProblem(root, own, file, specifier, packages) {
  if (specifier.startsWith('.')) {
    const target = posix(relative(root, resolve(root, dirname(file), specifier)))
    const other = packages.find((dir) => target === dir || target.startsWith(`${dir}/`))
    if (other === undefined || other === own) return undefined
    if (target.startsWith(`${other}/tests/`) || target === `${other}/tests`) {
      return `imports ${other}/tests (${specifier}): another package's tests are not an API; move what is shared to @deepseek-ai/dsh-testkit`
    }
    return `reaches into ${other} by a path (${specifier}): import the package by its name`
  }
  if (/^(?:@[^/]+\/)?[^/]+\/(?:.*\/)?tests(?:\/|$)/.test(specifier)) {
    return `imports a package's tests folder (${specifier}): move what is shared to @deepseek-ai/dsh-testkit`
  }
  return undefined
}

/**
 * The cycles of the graph of workspace packages linked by `dependencies` and
 * `peerDependencies` (devDependencies left out: a package's tests are not
 * built), each as `a → b → … → a` by package name, or `[]`.
 */
export function runtimeDependencyCycles(root) {
  const manifests = new Map()
  for (const dir of packageDirs(root)) {
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'))
    if (typeof manifest.name === 'string') manifests.set(manifest.name, manifest)
  }
  const edges = new Map()
  for (const [name, manifest] of manifests) {
    const deps = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((dep) => manifests.has(dep) && dep !== name)
    edges.set(name, deps.sort())
  }
  const cycles = []
  const seen = new Set()
  const state = new Map() // name → 'open' while on the path, 'done' after
  const path = []
  const visit = (name) => {
    state.set(name, 'open')
    path.push(name)
    for (const dep of edges.get(name)) {
      if (state.get(dep) === 'open') {
        const cycle = [...path.slice(path.indexOf(dep)), dep]
        const key = [...cycle.slice(0, -1)].sort().join(' ')
        if (!seen.has(key)) {
          seen.add(key)
          cycles.push(cycle.join(' → '))
        }
      } else if (!state.has(dep)) visit(dep)
    }
    path.pop()
    state.set(name, 'done')
  }
  for (const name of [...manifests.keys()].sort()) if (!state.has(name)) visit(name)
  return cycles
}

/** Checks every code file of every package under `root`, and the packages' runtime dependency graph. */
export function checkPackageImports(root) {
  const packages = packageDirs(root)
  const problems = []
  let files = 0
  let imports = 0
  for (const own of packages) {
    for (const path of codeFiles(join(root, own))) {
      files++
      const file = posix(relative(root, path))
      for (const { specifier, line } of importsOf(readFileSync(path, 'utf8'))) {
        imports++
        const problem = importProblem(root, own, file, specifier, packages)
        if (problem) problems.push(`${file}:${line}: ${problem}`)
      }
    }
  }
  for (const cycle of runtimeDependencyCycles(root)) {
    problems.push(`package.json: the dependencies form a cycle (${cycle}); a build cannot order it: make one of the links a devDependency, or move the shared part to its own package`)
  }
  return { problems, files, imports, packages: packages.length }
}

function main(argv) {
  const rootFlag = argv.indexOf('--root')
  const root = rootFlag >= 0 ? argv[rootFlag + 1] : join(dirname(fileURLToPath(import.meta.url)), '..')
  const result = checkPackageImports(root)
  if (result.problems.length) {
    console.error(`package imports check: ${result.problems.length} problem(s)`)
    for (const problem of result.problems) console.error(`  ${problem}`)
    process.exit(1)
  }
  console.log(
    `package imports check: ${result.imports} import(s) in ${result.files} files of ${result.packages} packages stay within their package or go through a package name; their dependencies form no cycle.`,
  )
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2))
}
