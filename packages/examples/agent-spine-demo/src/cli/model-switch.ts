import OpenAiProviders, { apiKeyProblem, presets } from '@deepseek-ai/dsh-llm-openai'
import AnthropicProviders, { apiKeyProblem as anthropicKeyProblem, presets as anthropicPresets } from '@deepseek-ai/dsh-llm-anthropic'
import ScriptedPlugin from '@deepseek-ai/dsh-llm-scripted'
import type { Context } from '../cordis'
import { apiKeyVariableProblem } from './api-key'
import { CliError } from './errors'
import { DEMO_MODEL, resolveModelRoute, type ModelRoute } from './model-route'
import { describePrice, type PriceTable } from './prices'

/** A provider/model pair, written `provider/model`. */
export interface Route {
  provider: string
  model: string
}

/** A route `/model` lists: `keyVariable` is set when its API key variable is missing or unusable, so switching to it would be refused. */
interface ListedRoute extends Route {
  keyVariable?: string
}

/**
 * `/model`: switches the provider and model of the running session. The
 * choice goes to dsh-agent-default-model (`select`), which fills the route of
 * every request of an agent that names none (the demo's agent names none), so
 * it applies from the next request on, the running turn's next step
 * included; the loop then logs a new `request/header` (reason `change`),
 * which is how the log records the switch. An adapter the new route needs
 * (another OpenAI-compatible provider, an Anthropic Messages API one, or the
 * offline model) is mounted into the app the first time; the API key must be
 * in its variable already, and `onMount` is told of the route (the command
 * line adds its key to what it redacts).
 *
 * `lines()` lists every model of every route the demo can reach: the offline
 * models, the session's own provider, and each preset's models
 * (dsh-llm-openai's DeepSeek and OpenAI, dsh-llm-anthropic's Anthropic and
 * DeepSeek-Anthropic), noting the key variable a route still needs.
 *
 * `spec` is `provider/model`, a provider alone (its default model), or a
 * model alone (the current provider's, else the preset that lists it). The
 * scripted provider takes only its configured models, so a typo is caught.
 */
export class ModelSwitch {
  private route: Route
  private readonly mounted = new Set<string>()

  constructor(
    private readonly ctx: Context,
    private readonly initial: ModelRoute,
    private readonly prices: PriceTable,
    private readonly env: NodeJS.ProcessEnv,
    private readonly onMount: (route: ModelRoute) => void = () => {},
  ) {
    this.route = { provider: initial.provider, model: initial.model }
    this.mounted.add(initial.provider)
  }

  /** The route requests use now. */
  current(): Route {
    return { ...this.route }
  }

  /** `/model` without arguments: the current route, then the models one can switch to, with their prices. */
  lines(): string[] {
    const current = `${this.route.provider}/${this.route.model}`
    const known = this.known()
    const lines = [`model ${current}${this.priceNote(this.route)}`, 'models (/model <provider>/<model>, or any model id of a provider):']
    for (const route of known) {
      const name = `${route.provider}/${route.model}`
      const needs = route.keyVariable ? ` · needs ${route.keyVariable}` : ''
      lines.push(`${name === current ? '*' : ' '} ${name}${this.priceNote(route)}${needs}`)
    }
    return lines
  }

  /** Switches to `spec`; resolves with the line to print. Throws a `CliError` (`INVALID_MODEL`) with a sentence when it cannot. */
  async switchTo(spec: string): Promise<string> {
    const wanted = this.parse(spec.trim())
    const previous = `${this.route.provider}/${this.route.model}`
    const next = this.resolve(wanted)
    const name = `${next.provider}/${next.model}`
    if (name === previous) return `already on ${name}`
    await this.mount(next)
    // dsh-agent-default-model's service (mounted by the spine bundle); typed here by the one method used.
    const selector = this.ctx.get('agentDefaultModel') as { select(selection: Route): void } | undefined
    if (!selector) throw new CliError('INVALID_MODEL', 'no default-model service is mounted: /model cannot switch')
    selector.select({ provider: next.provider, model: next.model })
    this.route = { provider: next.provider, model: next.model }
    return `model ${previous} → ${name}${this.priceNote(this.route)}: from the next request on (logged as a new request header; the provider's prompt cache starts over)`
  }

  private parse(spec: string): { provider?: string; model?: string } {
    if (!spec) throw new CliError('INVALID_MODEL', 'usage: /model <provider>/<model> (or a model id, or a provider)')
    const providers = new Set([...this.mounted, 'scripted', ...Object.keys(presets), ...Object.keys(anthropicPresets)])
    const slash = spec.indexOf('/')
    if (slash > 0 && providers.has(spec.slice(0, slash))) return { provider: spec.slice(0, slash), model: spec.slice(slash + 1) || undefined }
    if (providers.has(spec)) return { provider: spec }
    return { model: spec }
  }

  private resolve(wanted: { provider?: string; model?: string }): ModelRoute {
    const initial = this.initial
    const scriptedModels = initial.kind === 'scripted' ? initial.scripted.models.map((model) => model.id) : [DEMO_MODEL]
    let { provider } = wanted
    const { model } = wanted
    // A model alone: the current provider's when it offers it, else the preset that lists it
    // (OpenAI-compatible or Anthropic), else the current provider's after all (a local server's model).
    if (provider === undefined && model !== undefined) {
      if (this.route.provider === 'scripted' || (initial.kind === 'scripted' && this.route.provider === initial.provider)) {
        provider = scriptedModels.includes(model) ? this.route.provider : undefined
      } else if (presetModels(this.route.provider).includes(model) || !allPresets().some(([name]) => presetModels(name).includes(model))) {
        provider = this.route.provider
      }
    }
    if (provider === (initial.kind === 'scripted' ? initial.provider : 'scripted') || provider === 'scripted') {
      const chosen = model ?? DEMO_MODEL
      if (!scriptedModels.includes(chosen)) {
        throw new CliError('INVALID_MODEL', `the offline model has no model "${chosen}" (it has ${scriptedModels.join(', ')}; scripted.models in the config file adds more)`)
      }
      if (initial.kind === 'scripted') return { ...initial, model: chosen }
      return resolveModelRoute({ provider: 'scripted', model: chosen }, '/model', this.env)
    }
    // The provider the session started with keeps its config (base URL, key variable, headers).
    if ((initial.kind === 'openai' || initial.kind === 'anthropic') && provider === initial.provider) {
      return { ...initial, model: model ?? initial.model }
    }
    return resolveModelRoute({ provider, model }, '/model', this.env)
  }

  /** Mounts the adapter of `route` unless one for its provider is mounted already. */
  private async mount(route: ModelRoute): Promise<void> {
    if (this.mounted.has(route.provider)) return
    if (route.kind === 'scripted') await this.ctx.plugin(ScriptedPlugin, route.scripted)
    else if (route.kind === 'openai') await this.ctx.plugin(OpenAiProviders, { providers: [route.config] })
    else if (route.kind === 'anthropic') await this.ctx.plugin(AnthropicProviders, { providers: [route.config] })
    else throw new CliError('INVALID_MODEL', `/model cannot start the adapter of provider "${(route as Route).provider}"; start dsh-demo with it instead`)
    this.mounted.add(route.provider)
    this.onMount(route)
  }

  /** Every route the person can name: the offline models, the session's own provider, then each preset's models. */
  private known(): ListedRoute[] {
    const out: ListedRoute[] = []
    const initial = this.initial
    const scripted = initial.kind === 'scripted' ? initial.scripted.models.map((model) => model.id) : [DEMO_MODEL]
    for (const model of scripted) out.push({ provider: initial.kind === 'scripted' ? initial.provider : 'scripted', model })
    if (initial.kind !== 'scripted' && !presetModels(initial.provider).includes(initial.model)) out.push({ provider: initial.provider, model: initial.model })
    for (const [provider, keyVariable] of allPresets()) {
      // The session's own provider passed the key check at startup (with its own key variable, if one was named).
      const needs = provider !== initial.provider && keyVariable && apiKeyVariableProblem(keyVariable, provider, this.env, keyCheckOf(provider)) ? keyVariable : undefined
      for (const model of presetModels(provider)) out.push({ provider, model, ...(needs ? { keyVariable: needs } : {}) })
    }
    return out
  }

  private priceNote(route: Route): string {
    const price = this.prices.get(route.provider, route.model)
    return price ? ` (${describePrice(price)})` : ''
  }
}

/** Every preset provider, OpenAI-compatible then Anthropic, with the variable its API key is read from. */
function allPresets(): [string, string | undefined][] {
  return [...Object.entries(presets), ...Object.entries(anthropicPresets)].map(([name, preset]) => [name, preset.apiKeyEnv])
}

/** The models the preset `provider` lists (none for a provider that is no preset). */
function presetModels(provider: string): string[] {
  const preset = Object.hasOwn(presets, provider) ? presets[provider as keyof typeof presets] : Object.hasOwn(anthropicPresets, provider) ? anthropicPresets[provider as keyof typeof anthropicPresets] : undefined
  return Object.keys(preset?.models ?? {})
}

/** The key check of the adapter that serves the preset `provider`. */
function keyCheckOf(provider: string): (key: string) => string | undefined {
  return Object.hasOwn(anthropicPresets, provider) ? anthropicKeyProblem : apiKeyProblem
}
