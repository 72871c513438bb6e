// What the layout checks read of the repository: the packages (`packages/<group>/<name>`, each
// with its package.json), their source and test files, and every module a file imports,
// resolved to a file where it points into the repository. Imports are read with the
// TypeScript parser, type-only ones included: a circle of types is still a circle.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

/** Directories never read: dependencies, builds, generated output. */
const SKIP_DIRS = new Set(['node_modules', 'dist', 'coverage', '.git'])
/** The files whose imports are read. */
const CODE_FILE = /\.(?:[cm]?ts|tsx|[cm]?js|jsx)$/
/** How an extensionless (or `.js`) relative specifier may be written for a TypeScript file. */
const CANDIDATES = ['', '.ts', '.tsx', '.mts', '.js', '.mjs', '/index.ts', '/index.tsx', '/index.js']

/** `path` relative to `root`, with `/` separators (stable across platforms, and what reports print). */
export function rel(root, path) {
  return relative(root, path).split(sep).join('/')
}

function isDir(path) {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function isFile(path) {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * Every package of the workspace: `{ dir, name, json }` for each
 * `packages/<group>/<name>/package.json`, sorted by directory. A package.json
 * that is not valid JSON is returned with `json: undefined` and `error` set.
 */
export function listPackages(root) {
  const out = []
  const packagesDir = join(root, 'packages')
  if (!isDir(packagesDir)) return out
  for (const group of readdirSync(packagesDir).sort()) {
    if (!isDir(join(packagesDir, group))) continue
    for (const name of readdirSync(join(packagesDir, group)).sort()) {
      const dir = join(packagesDir, group, name)
      const file = join(dir, 'package.json')
      if (!isFile(file)) continue
      try {
        const json = JSON.parse(readFileSync(file, 'utf8'))
        out.push({ dir, name: json.name, json })
      } catch (error) {
        out.push({ dir, name: undefined, json: undefined, error: String(error instanceof Error ? error.message : error) })
      }
    }
  }
  return out
}

/** Every code file under `dir` (recursively, skipping dependencies and builds), sorted. */
export function listCode(dir) {
  const out = []
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name)
      if (isDir(path)) {
        if (!SKIP_DIRS.has(name)) walk(path)
      } else if (CODE_FILE.test(name) && !name.endsWith('.d.ts')) {
        out.push(path)
      }
    }
  }
  if (isDir(dir)) walk(dir)
  return out
}

/**
 * The modules `file` imports, in source order: `{ specifier, line, typeOnly }`
 * for every `import … from`, side-effect `import '…'`, `export … from`,
 * dynamic `import('…')`, `require('…')` and type-position `import('…')`
 * with a string literal.
 */
export function importsOf(file, text = readFileSync(file, 'utf8')) {
  const cached = parsed.get(file)
  if (cached?.text === text) return cached.imports
  const imports = parseImports(file, text)
  parsed.set(file, { text, imports })
  return imports
}

/** Parsed imports by file, reused while the file's text is unchanged (several checks read the same files). */
const parsed = new Map()

function parseImports(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file))
  const out = []
  const add = (literal, typeOnly) => {
    if (!literal || !ts.isStringLiteralLike(literal)) return
    const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1
    out.push({ specifier: literal.text, line, typeOnly })
  }
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause
      const typeOnly = !!clause && (clause.isTypeOnly || onlyTypeSpecifiers(clause))
      add(node.moduleSpecifier, typeOnly)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      add(node.moduleSpecifier, node.isTypeOnly)
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly)
    } else if (ts.isCallExpression(node) && node.arguments.length >= 1) {
      const callee = node.expression
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) add(node.arguments[0], false)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

function onlyTypeSpecifiers(clause) {
  if (clause.name) return false
  const bindings = clause.namedBindings
  if (!bindings || !ts.isNamedImports(bindings)) return false
  return bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly)
}

function scriptKind(file) {
  if (/\.[cm]?js$|\.jsx$/.test(file)) return ts.ScriptKind.JS
  if (file.endsWith('.tsx')) return ts.ScriptKind.TSX
  return ts.ScriptKind.TS
}

/** The file a relative specifier names from `fromFile`, or undefined when none exists. */
export function resolveRelative(fromFile, specifier) {
  const base = resolve(dirname(fromFile), specifier)
  const stems = [base]
  // TypeScript sources are often imported as `./x.js`.
  if (/\.[cm]?js$/.test(base)) stems.push(base.replace(/\.([cm]?)js$/, '.$1ts'))
  for (const stem of stems) {
    for (const suffix of CANDIDATES) {
      if (isFile(stem + suffix)) return stem + suffix
    }
  }
  return undefined
}

/**
 * A resolver for workspace package names: `@scope/name` and `@scope/name/sub`
 * map to the file the package's `exports` give under the `dsh-source` condition
 * (what the tests and the typecheck resolve to). Other packages resolve to
 * undefined.
 */
export function workspaceResolver(packages) {
  const byName = new Map(packages.filter((p) => p.name).map((p) => [p.name, p]))
  return (specifier) => {
    const match = /^(@[^/]+\/[^/]+|[^@/][^/]*)(\/.*)?$/.exec(specifier)
    if (!match) return undefined
    const pkg = byName.get(match[1])
    if (!pkg) return undefined
    const subpath = `.${match[2] ?? ''}`
    const entry = pkg.json.exports?.[subpath]
    const target = typeof entry === 'string' ? entry : entry?.['dsh-source'] ?? entry?.import ?? entry?.default
    if (typeof target === 'string') {
      const file = join(pkg.dir, target)
      return existsSync(file) ? file : undefined
    }
    // No exports map entry: a deep path into the package.
    return match[2] ? resolveRelative(join(pkg.dir, 'package.json'), `.${match[2]}`) : undefined
  }
}

/** The package (from `packages`) whose directory holds `file`, if any. */
export function packageOf(packages, file) {
  let best
  for (const pkg of packages) {
    if (file.startsWith(pkg.dir + sep) && (!best || pkg.dir.length > best.dir.length)) best = pkg
  }
  return best
}
