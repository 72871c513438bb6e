import type { ModelInfo } from '../adapter'
import type { Secrets } from '../redact'

/** The capabilities a provider config may give a model (a subset of each adapter's `ModelConfig`). */
export interface ModelCapabilities {
  readonly contextWindow?: number
  readonly maxOutputTokens?: number
  readonly reasoningEfforts?: readonly string[]
  readonly defaultReasoningEffort?: string
}

/**
 * An adapter's `resolveModel` answer: the id and whatever capabilities are
 * configured (a model that is not configured reports only its id). Its
 * strings are redacted like failure messages, since they come from
 * configuration that may hold a pasted credential. Fresh arrays: the caller
 * may keep the answer without touching the config.
 */
export function modelInfoOf(id: string, caps: ModelCapabilities | undefined, secrets: Secrets): ModelInfo {
  const info: ModelInfo = { id: secrets.redact(id) }
  if (!caps) return info
  if (caps.contextWindow !== undefined) info.contextWindow = caps.contextWindow
  if (caps.maxOutputTokens !== undefined) info.maxOutputTokens = caps.maxOutputTokens
  if (caps.reasoningEfforts?.length) info.reasoningEfforts = caps.reasoningEfforts.map((effort) => secrets.redact(effort))
  if (caps.defaultReasoningEffort !== undefined) info.defaultReasoningEffort = secrets.redact(caps.defaultReasoningEffort)
  return info
}
