#!/usr/bin/env node
// Checks that packages meet only through their names: no file of a package
// (its tests above all) imports another package's `tests/` folder, by a
// relative path or by a `@scope/name/tests/…` subpath, and none reaches into
// another package's folder by a relative path. Shared test code lives in
// @deepseek-ai/dsh-testkit (packages/support/testkit); a package's sources are
// imported by its name. Exits 1 and lists file:line for each import that breaks
// the rule.
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

/** Checks every code file of every package under `root`. */
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
  console.log(`package imports check: ${result.imports} import(s) in ${result.files} files of ${result.packages} packages stay within their package or go through a package name.`)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2))
}
