import { AnthropicAdapter, type AnthropicAdapterOptions } from './adapter'
import { AnthropicConfig } from './config'
import type { Context } from './cordis'
import { AnthropicConfigError } from './provider'

/**
 * The Cordis plugin: builds one `AnthropicAdapter` per configured provider and
 * registers each on `ctx.llm` under its provider name. The registrations
 * revert when the plugin is disposed.
 *
 * Throws `AnthropicConfigError` (code `INVALID_PROVIDER_CONFIG`) at load for a
 * provider that cannot work or for two providers with the same name, so the
 * fiber fails before anything is registered.
 */
export class AnthropicProviders {
  static readonly inject = ['llm']
  static readonly Config = AnthropicConfig

  /** The registered adapters, in config order. */
  readonly adapters: readonly AnthropicAdapter[]

  constructor(ctx: Context, config: AnthropicConfig, options?: AnthropicAdapterOptions) {
    const adapters = (config?.providers ?? []).map((provider) => new AnthropicAdapter(provider, options))
    const seen = new Set<string>()
    for (const adapter of adapters) {
      if (seen.has(adapter.provider)) throw new AnthropicConfigError(`two providers are named "${adapter.provider}"; give one of them another name`)
      seen.add(adapter.provider)
    }
    this.adapters = Object.freeze(adapters)
    for (const adapter of adapters) ctx.llm.registerAdapter([adapter.provider], adapter)
  }

  /** The adapter registered under `provider`, if this plugin registered one. */
  adapter(provider: string): AnthropicAdapter | undefined {
    return this.adapters.find((adapter) => adapter.provider === provider)
  }
}
