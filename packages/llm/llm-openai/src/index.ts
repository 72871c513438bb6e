import { OpenAiProviders } from './plugin'

export default OpenAiProviders
export { OpenAiProviders } from './plugin'
export { OpenAiAdapter } from './adapter'
export type { OpenAiAdapterOptions } from './adapter'
export { ImageLimits, ModelConfig, OpenAiConfig, ProviderConfig } from './config'
export { ImageBudget, imageNotes } from './image-budget'
export type { MaxTokensParam, PresetName } from './config'
export { presets } from './presets'
export { apiKeyProblem, checkApiKey, OpenAiConfigError, providerDefaults, resolveProvider } from './provider'
export type { ResolvedProvider } from './provider'
export { toTokenUsage } from './usage'
export { retryAfterMs } from './failures'
