// Checks the two rules of the package skeleton (docs/contributing.md) that a script can read:
// a package imports Cordis only in `src/cordis.ts` (so a Cordis bump is one edit per package),
// and `src/index.ts` only imports and re-exports (the code lives in files named after it).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { importsOf, listCode, listPackages, rel } from './source-graph.mjs'

/** Whether `statement` is allowed in an `index.ts`: an import, a re-export, or `export default <name>`. */
function reExportOnly(statement) {
  if (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) return true
  return ts.isExportAssignment(statement) && !statement.isExportEquals && ts.isIdentifier(statement.expression)
}

/**
 * The statements of an `index.ts` that are neither imports nor re-exports:
 * `{ line, text }` with the first line of each statement's text.
 */
export function indexCode(file, text = readFileSync(file, 'utf8')) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const out = []
  for (const statement of source.statements) {
    if (reExportOnly(statement)) continue
    const line = source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1
    out.push({ line, text: statement.getText(source).split('\n')[0] })
  }
  return out
}

/** Every breach of the two rules, as `file:line: message` lines. */
export function skeletonProblems(root) {
  const problems = []
  for (const pkg of listPackages(root)) {
    const src = join(pkg.dir, 'src')
    for (const file of listCode(src)) {
      const path = rel(root, file)
      if (path !== `${rel(root, src)}/cordis.ts`) {
        for (const { specifier, line } of importsOf(file)) {
          if (specifier === 'cordis' || specifier.startsWith('cordis/')) {
            problems.push(`${path}:${line}: imports '${specifier}'; import Cordis through ./cordis (src/cordis.ts re-exports what the package uses)`)
          }
        }
      }
      if (file === join(src, 'index.ts')) {
        for (const { line, text } of indexCode(file)) {
          problems.push(`${path}:${line}: index.ts only re-exports; move \`${text.length > 60 ? `${text.slice(0, 57)}…` : text}\` to a file named after it`)
        }
      }
    }
  }
  return problems
}
