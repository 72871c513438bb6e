import * as languages from '@speed-highlight/core/languages'
import { tokenizeWith, type ShjLanguageData, type ShjToken } from '@speed-highlight/core/tokenize'
import type { Style } from '../style'

type Grammars = Record<string, ShjLanguageData>
const grammars = languages as unknown as Grammars

/** Fence labels people write, mapped to a grammar of speed-highlight (the grammar's own name maps to itself). */
const ALIASES: Record<string, string> = {
  typescript: 'ts',
  tsx: 'ts',
  mts: 'ts',
  cts: 'ts',
  javascript: 'js',
  jsx: 'js',
  mjs: 'js',
  cjs: 'js',
  node: 'js',
  python: 'py',
  python3: 'py',
  rust: 'rs',
  shell: 'bash',
  sh: 'bash',
  zsh: 'bash',
  console: 'bash',
  shellsession: 'bash',
  yml: 'yaml',
  jsonc: 'json',
  json5: 'json',
  golang: 'go',
  cpp: 'c',
  'c++': 'c',
  h: 'c',
  hpp: 'c',
  cc: 'c',
  svg: 'xml',
  patch: 'diff',
  dockerfile: 'docker',
  makefile: 'make',
  markdown: 'md',
  perl: 'pl',
}

/** The style of each token type of speed-highlight (plain text has none). */
const TOKEN_STYLE: Partial<Record<ShjToken, Parameters<Style>[0]>> = {
  kwd: 'magenta',
  str: 'green',
  num: 'yellow',
  bool: 'yellow',
  cmnt: 'gray',
  func: 'blue',
  class: 'cyan',
  type: 'cyan',
  var: 'red',
  err: 'red',
  deleted: 'red',
  insert: 'green',
  esc: 'cyan',
  section: 'bold',
}

/** The grammar for a fence's language label (`ts`, `TypeScript`, `sh` …), if speed-highlight has one. */
export function grammarFor(label: string): ShjLanguageData | undefined {
  const name = label.trim().toLowerCase()
  const key = ALIASES[name] ?? name
  return Object.hasOwn(grammars, key) ? grammars[key] : undefined
}

/**
 * One line of code in the language of `label`, colored by `style` (which is
 * the identity when colors are off). Unknown languages and a tokenizer that
 * fails come back as they are: highlighting never loses text.
 */
export function highlightLine(code: string, label: string, style: Style): string {
  const grammar = grammarFor(label)
  if (!grammar || code === '') return code
  let out = ''
  try {
    tokenizeWith(code, grammar, (text, token) => {
      const format = token ? TOKEN_STYLE[token] : undefined
      out += format && text ? style(format, text) : text
    }, { languages: grammars })
  } catch {
    return code
  }
  return out
}
