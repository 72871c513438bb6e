#!/usr/bin/env node
// Checks that what the repository cites of its contracts can be looked up:
// every requirement id (`R-SES-2`, `R-IN-1…8`, `R-CAN-2/4`) has a paragraph in
// docs/contracts.md and in docs/contracts.zh-CN.md, every "spec §N" has an
// anchor there, every link to a contracts anchor resolves, and user-facing
// markdown links to the contracts instead of citing a bare "§N". Exits 1 and
// lists file:line for each problem.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

export const CONTRACTS = 'docs/contracts.md'
export const CONTRACTS_ZH = 'docs/contracts.zh-CN.md'

/** Where citations are looked for (besides the root README*.md files). */
const SCAN_ROOTS = ['packages', 'docs', 'bench', 'scripts', '.agents/notes', '.changeset', '.ci']
/** Directories never scanned: dependencies, builds, bench output, test fixtures (which cite on purpose). */
const SKIP_DIRS = new Set(['node_modules', 'dist', 'results', 'fixtures', 'coverage', '.git'])
const TEXT_FILE = /\.(?:[cm]?[jt]sx?|md|json|ya?ml|sh)$/
/**
 * A file holding this text is not read: for the checker's own tests, whose
 * made-up ids are the point. Nothing else should need it.
 */
const IGNORE_MARKER = 'contracts-check: ignore-' + 'file'
/** Generated from source comments: their citations are checked for resolution, not for links. */
const GENERATED = new Set(['docs/cordis-catalog/events.md', 'docs/session-events.md'])

/**
 * A requirement id, then optionally more numbers of the same family: a range
 * (`R-IN-1…8`, `R-IN-1..8`, `R-IN-1–8`) or a list (`R-LLM-3/4/5`).
 */
const ID_PATTERN = /\bR-([A-Z]+)-(\d+)([a-z]?)((?:\s*(?:…|\.\.\.?|–|\/)\s*\d+[a-z]?)*)/g
const SECTION_PATTERN = /§\s*(\d+)/g
const ANCHOR_PATTERN = /<a id="([^"]+)"><\/a>/g
const LINK_PATTERN = /\]\(([^)\s]*contracts(?:\.zh-CN)?\.md)(?:#([^)\s]*))?\)/g

/**
 * The requirement ids cited in one line, ranges and lists expanded, each with
 * the column where its citation starts.
 */
export function citedIds(line) {
  const out = []
  for (const match of line.matchAll(ID_PATTERN)) {
    const [, family, first, suffix, rest] = match
    const ids = [`R-${family}-${first}${suffix}`]
    let previous = Number(first)
    for (const part of rest.matchAll(/\s*(…|\.\.\.?|–|\/)\s*(\d+)([a-z]?)/g)) {
      const [, sep, number, letter] = part
      const n = Number(number)
      if (sep !== '/' && !letter && n > previous) {
        for (let i = previous + 1; i <= n; i++) ids.push(`R-${family}-${i}`)
      } else {
        ids.push(`R-${family}-${number}${letter}`)
      }
      previous = n
    }
    for (const id of ids) out.push({ id, column: match.index + 1 })
  }
  return out
}

/** The anchor a requirement id gets in the contracts pages. */
export function anchorOf(id) {
  return id.toLowerCase()
}

/**
 * The spec sections cited in one line: `{ anchor: 'spec-13' | 'plugins-9', column }`.
 * A "§N" with "PLUGINS" shortly before it on the line is a section of the
 * plugin contracts; any other is a section of the spine's.
 */
export function citedSections(line) {
  const out = []
  for (const match of line.matchAll(SECTION_PATTERN)) {
    const before = line.slice(Math.max(0, match.index - 24), match.index)
    const doc = /PLUGINS/i.test(before) ? 'plugins' : 'spec'
    out.push({ anchor: `${doc}-${match[1]}`, column: match.index + 1, text: match[0] })
  }
  return out
}

/**
 * Parses a contracts page: its anchors, and the requirement paragraphs (an
 * `<a id="r-…">` anchor directly followed by a paragraph opening with the
 * bold id). Problems of the page itself are returned, not thrown.
 */
export function parseContracts(text, path) {
  const anchors = new Map()
  const requirements = new Map()
  const problems = []
  const lines = text.split('\n')
  lines.forEach((line, index) => {
    for (const match of line.matchAll(ANCHOR_PATTERN)) {
      const anchor = match[1]
      if (anchors.has(anchor)) problems.push(`${path}:${index + 1}: anchor "${anchor}" is defined twice (first on line ${anchors.get(anchor)})`)
      else anchors.set(anchor, index + 1)
    }
    const bold = /^\*\*(R-[A-Z]+-\d+[a-z]?)\b/.exec(line)
    if (bold) {
      const id = bold[1]
      const anchorLine = lines.slice(0, index).findLastIndex((l) => l.trim() !== '')
      const expected = `<a id="${anchorOf(id)}"></a>`
      if (anchorLine < 0 || lines[anchorLine].trim() !== expected) {
        problems.push(`${path}:${index + 1}: the paragraph of ${id} needs the anchor ${expected} on the line before it`)
      } else if (requirements.has(id)) {
        problems.push(`${path}:${index + 1}: ${id} has two paragraphs (first on line ${requirements.get(id)})`)
      } else {
        requirements.set(id, index + 1)
      }
    }
  })
  lines.forEach((line, index) => {
    for (const match of line.matchAll(/\]\(#([^)\s]+)\)/g)) {
      if (!anchors.has(match[1])) problems.push(`${path}:${index + 1}: link to #${match[1]}: no such anchor on this page`)
    }
  })
  for (const [anchor, line] of anchors) {
    if (!/^r-[a-z]+-\d+[a-z]?$/.test(anchor)) continue
    const id = anchor.toUpperCase().replace(/(\d)([A-Z])$/, (_, d, l) => d + l.toLowerCase())
    if (!requirements.has(id)) problems.push(`${path}:${line}: anchor "${anchor}" has no paragraph opening with **${id}**`)
  }
  return { anchors, requirements, problems }
}

/** Markdown that people read on the repository or a registry page: it must link, not cite "§N". */
function userFacing(path) {
  if (!path.endsWith('.md') || GENERATED.has(path)) return false
  if (path.startsWith('.agents/') || path.startsWith('.changeset/')) return false
  return path.startsWith('docs/') || /(^|\/)README(\.[\w-]+)?\.md$/.test(path) || /(^|\/)CHANGELOG\.md$/.test(path)
}

/** Every text file the check reads, as paths relative to `root` with `/` separators. */
export function scannedFiles(root) {
  const out = []
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      let stat
      try {
        stat = statSync(path)
      } catch {
        continue // a dangling link
      }
      if (stat.isDirectory()) {
        if (!SKIP_DIRS.has(name)) walk(path)
      } else if (TEXT_FILE.test(name) || (dir.endsWith(`${sep}.ci`) && !name.includes('.'))) {
        out.push(relative(root, path).split(sep).join('/'))
      }
    }
  }
  for (const name of readdirSync(root).sort()) {
    if (/^README(\.[\w-]+)?\.md$/.test(name)) out.push(name)
  }
  for (const sub of SCAN_ROOTS) {
    if (existsSync(join(root, sub))) walk(join(root, sub))
  }
  return out.filter((path) => path !== CONTRACTS && path !== CONTRACTS_ZH && path !== 'pnpm-lock.yaml')
}

/**
 * Runs every check against the repository at `root`. Returns the problems
 * (`file:line: message`), warnings, and what was read.
 */
export function checkContracts(root) {
  const problems = []
  const warnings = []
  const pages = {}
  for (const path of [CONTRACTS, CONTRACTS_ZH]) {
    let text
    try {
      text = readFileSync(join(root, path), 'utf8')
    } catch {
      problems.push(`${path}:1: missing`)
      pages[path] = { anchors: new Map(), requirements: new Map(), problems: [], text: '' }
      continue
    }
    pages[path] = { ...parseContracts(text, path), text }
    problems.push(...pages[path].problems)
  }
  const en = pages[CONTRACTS]
  const zh = pages[CONTRACTS_ZH]

  // The two pages define the same anchors.
  for (const [a, b, label] of [[en, zh, CONTRACTS_ZH], [zh, en, CONTRACTS]]) {
    for (const [anchor, line] of a.anchors) {
      if (!b.anchors.has(anchor)) problems.push(`${label}:1: has no anchor "${anchor}" (the other page defines it on line ${line})`)
    }
  }

  // Package headings: a package the page describes as existing must exist; a
  // planned one that now exists should lose its "planned".
  for (const [path, page] of Object.entries(pages)) {
    page.text.split('\n').forEach((line, index) => {
      if (!/^#{2,4} /.test(line)) return
      const planned = /\bplanned\b|计划中/.test(line)
      for (const match of line.matchAll(/`(packages\/[\w-]+\/[\w-]+)`/g)) {
        const present = existsSync(join(root, match[1], 'package.json'))
        if (!planned && !present) problems.push(`${path}:${index + 1}: ${match[1]} does not exist (mark the heading "planned", or fix the path)`)
        if (planned && present) warnings.push(`${path}:${index + 1}: ${match[1]} exists now: drop "planned" from the heading`)
      }
    })
  }

  const files = scannedFiles(root)
  let citations = 0
  for (const path of files) {
    let text
    try {
      text = readFileSync(join(root, path), 'utf8')
    } catch {
      continue
    }
    if (!text.includes('R-') && !text.includes('§') && !text.includes('contracts')) continue
    if (text.includes(IGNORE_MARKER)) continue
    const facing = userFacing(path)
    text.split('\n').forEach((line, index) => {
      const where = `${path}:${index + 1}`
      for (const { id } of citedIds(line)) {
        citations++
        const missing = [en, zh].filter((page) => !page.requirements.has(id)).map((page) => (page === en ? CONTRACTS : CONTRACTS_ZH))
        if (missing.length) problems.push(`${where}: ${id} has no paragraph in ${missing.join(' or ')}`)
      }
      const links = [...line.matchAll(LINK_PATTERN)]
      for (const link of links) {
        const page = link[1].endsWith('zh-CN.md') ? zh : en
        // Only a markdown file's relative links are paths from where it lives (a script may write markdown elsewhere).
        const target = !path.endsWith('.md') || /^[a-z]+:/.test(link[1]) ? undefined : join(dirname(path), link[1]).split(sep).join('/')
        if (target !== undefined && target !== CONTRACTS && target !== CONTRACTS_ZH) {
          problems.push(`${where}: link to ${link[1]} does not lead to ${CONTRACTS} from this file`)
        } else if (link[2] && !page.anchors.has(link[2])) {
          problems.push(`${where}: link to ${link[1]}#${link[2]}: no such anchor in ${page === zh ? CONTRACTS_ZH : CONTRACTS}`)
        }
      }
      for (const section of citedSections(line)) {
        citations++
        if (!en.anchors.has(section.anchor)) {
          problems.push(`${where}: "${section.text}" cites a section with no anchor #${section.anchor} in ${CONTRACTS}`)
        } else if (facing && !insideContractsLink(line, section.column - 1)) {
          problems.push(`${where}: "${section.text}" is a bare spec citation: link to ${CONTRACTS}#${section.anchor} (or the paragraph it means) instead`)
        }
      }
    })
  }
  return { problems, warnings, files: files.length, citations, requirements: en.requirements.size }
}

/** Whether column `at` of `line` is inside the text of a markdown link to a contracts page. */
function insideContractsLink(line, at) {
  for (const match of line.matchAll(/\[([^\]]*)\]\(([^)\s]*)\)/g)) {
    if (at > match.index && at < match.index + 1 + match[1].length && /contracts(?:\.zh-CN)?\.md/.test(match[2])) return true
  }
  return false
}

function main(argv) {
  const rootFlag = argv.indexOf('--root')
  const root = rootFlag >= 0 ? argv[rootFlag + 1] : join(dirname(fileURLToPath(import.meta.url)), '..')
  const result = checkContracts(root)
  for (const warning of result.warnings) console.warn(`warning: ${warning}`)
  if (result.problems.length) {
    console.error(`contracts check: ${result.problems.length} problem(s)`)
    for (const problem of result.problems) console.error(`  ${problem}`)
    console.error(`Every requirement id and spec section the repository cites needs a paragraph or anchor in ${CONTRACTS} and ${CONTRACTS_ZH}.`)
    process.exit(1)
  }
  console.log(
    `contracts check: ${result.citations} citation(s) in ${result.files} files resolve; ${result.requirements} requirement paragraphs in ${CONTRACTS} and ${CONTRACTS_ZH}.`,
  )
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2))
}
