import { describe, expect, it } from 'vitest'
import { resolveModelRoute, routeSecrets } from '../src/cli/model-route'
import { Redactor } from '../src/cli/redact'

/**
 * The adapters send the key trimmed, so text that echoes it (a gateway's
 * error quoting the Authorization header) holds the trimmed key: the
 * redactor must know that form too when the variable carries white space.
 */
describe('routeSecrets: a key exported with surrounding white space', () => {
  const key = 'sk-0123456789abcdef0123'
  const env = { DEEPSEEK_API_KEY: `${key}\n`, ANTHROPIC_API_KEY: ` ${key} ` }

  it('redacts the key as the OpenAI-compatible adapter sends it', () => {
    const route = resolveModelRoute({ provider: 'deepseek' }, 'flags', env)
    const redactor = new Redactor(routeSecrets(route, env))
    expect(redactor.redact(`401 from gateway: bad header "Authorization: Bearer ${key}"`)).not.toContain(key)
  })

  it('redacts the key as the Anthropic adapter sends it', () => {
    const route = resolveModelRoute({ provider: 'anthropic' }, 'flags', env)
    const redactor = new Redactor(routeSecrets(route, env))
    expect(redactor.redact(`401: x-api-key="${key}" refused`)).not.toContain(key)
  })
})
