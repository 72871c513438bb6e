import { SystemPromptError } from './errors'
import type { PromptSection, PromptVars } from './types'

/** Checks a section before it is registered; returns a frozen copy. Throws `INVALID_SECTION`. */
export function checkSection(section: PromptSection): PromptSection {
  if (section === null || typeof section !== 'object') {
    throw new SystemPromptError('INVALID_SECTION', 'a prompt section must be an object { name, order, text | render }')
  }
  const { name, order } = section
  if (typeof name !== 'string' || name.length === 0) {
    throw new SystemPromptError('INVALID_SECTION', 'a prompt section needs a non-empty string name')
  }
  if (typeof order !== 'number' || !Number.isFinite(order)) {
    throw new SystemPromptError('INVALID_SECTION', `prompt section "${name}" needs a finite number order`)
  }
  const hasText = 'text' in section && section.text !== undefined
  const hasRender = 'render' in section && section.render !== undefined
  if (hasText === hasRender) {
    throw new SystemPromptError('INVALID_SECTION', `prompt section "${name}" needs exactly one of text or render`)
  }
  if (hasText) {
    if (typeof (section as { text: unknown }).text !== 'string') {
      throw new SystemPromptError('INVALID_SECTION', `prompt section "${name}": text must be a string`)
    }
    return Object.freeze({ name, order, text: (section as { text: string }).text })
  }
  const render = (section as { render: unknown }).render
  if (typeof render !== 'function') {
    throw new SystemPromptError('INVALID_SECTION', `prompt section "${name}": render must be a function`)
  }
  return Object.freeze({ name, order, render: render as (vars: PromptVars) => string })
}

/** Checks the variables and returns a frozen copy without `undefined` values. Throws `INVALID_VARS`. */
export function checkVars(vars: PromptVars): PromptVars {
  if (vars === null || typeof vars !== 'object') {
    throw new SystemPromptError('INVALID_VARS', 'prompt variables must be an object of strings')
  }
  const out: Record<string, string> = {}
  for (const key of Object.keys(vars).sort()) {
    const value = vars[key]
    if (value === undefined) continue
    if (typeof value !== 'string') {
      throw new SystemPromptError('INVALID_VARS', `prompt variable "${key}" must be a string`)
    }
    out[key] = value
  }
  if (typeof out.provider !== 'string' || typeof out.model !== 'string') {
    throw new SystemPromptError('INVALID_VARS', 'prompt variables need provider and model')
  }
  return Object.freeze(out) as unknown as PromptVars
}

/** A stable text key of checked variables (their keys are already sorted). */
export function varsKey(vars: PromptVars): string {
  return JSON.stringify(vars)
}

/**
 * Renders sections in (order, name) order: each one's text trimmed, empty ones
 * left out, joined by a blank line. Same sections and variables, same bytes
 * (R-SP-1). Throws `RENDER_FAILED` naming the section at fault.
 */
export function renderSections(sections: readonly PromptSection[], vars: PromptVars): string {
  const sorted = [...sections].sort((a, b) => a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const parts: string[] = []
  for (const section of sorted) {
    let text: unknown
    if ('render' in section) {
      try {
        text = section.render(vars)
      } catch (error) {
        throw new SystemPromptError('RENDER_FAILED', `prompt section "${section.name}" failed to render: ${detailOf(error)}`, { cause: error })
      }
      if (typeof text !== 'string') {
        throw new SystemPromptError('RENDER_FAILED', `prompt section "${section.name}" rendered ${typeof text}, not a string`)
      }
    } else {
      text = section.text
    }
    const trimmed = (text as string).trim()
    if (trimmed) parts.push(trimmed)
  }
  return parts.join('\n\n')
}

/**
 * What a section's throw said: the message of an Error, or of any object
 * that carries a string `message` (an error of another library or realm),
 * else the value as text. Never throws: a value that cannot be made text (an
 * object without a prototype) must not turn `RENDER_FAILED` into an untyped
 * `TypeError`.
 */
function detailOf(error: unknown): string {
  try {
    const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined
    if (typeof message === 'string' && message.trim() !== '') return message
    return String(error)
  } catch {
    return 'it threw a value that is not an Error'
  }
}
