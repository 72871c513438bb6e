import { OpenAiAdapter, type OpenAiAdapterOptions } from './adapter'
import { OpenAiConfig } from './config'
import type { Context } from './cordis'
import { OpenAiConfigError } from './provider'

/**
 * The Cordis plugin: builds one `OpenAiAdapter` per configured provider and
 * registers each on `ctx.llm` under its provider name. The registrations
 * revert when the plugin is disposed; re-plugging with a new config replaces
 * them (calls already prepared keep the adapter they captured).
 *
 * Throws `OpenAiConfigError` (code `INVALID_PROVIDER_CONFIG`) at load for a
 * provider that cannot work or for two providers with the same name, so the
 * fiber fails before anything is registered.
 */
export class OpenAiProviders {
  static readonly inject = ['llm']
  static readonly Config = OpenAiConfig

  /** The registered adapters, in config order. */
  readonly adapters: readonly OpenAiAdapter[]

  constructor(ctx: Context, config: OpenAiConfig, options?: OpenAiAdapterOptions) {
    const adapters = (config?.providers ?? []).map((provider) => new OpenAiAdapter(provider, options))
    const seen = new Set<string>()
    for (const adapter of adapters) {
      if (seen.has(adapter.provider)) {
        throw new OpenAiConfigError(`two providers are named "${adapter.provider}"; give one of them another name`)
      }
      seen.add(adapter.provider)
    }
    this.adapters = Object.freeze(adapters)
    for (const adapter of adapters) ctx.llm.registerAdapter([adapter.provider], adapter)
  }

  /** The adapter registered under `provider`, if this plugin registered one. */
  adapter(provider: string): OpenAiAdapter | undefined {
    return this.adapters.find((adapter) => adapter.provider === provider)
  }
}
