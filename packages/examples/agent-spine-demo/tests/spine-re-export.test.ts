import { describe, expect, it } from 'vitest'
import AgentSpine, { SPINE_PACKAGES, SpineConfig } from '@deepseek-ai/dsh-agent-spine'
import DemoDefault, { AgentSpine as DemoSpine, SPINE_PACKAGES as DemoPackages, SpineConfig as DemoConfig } from '@deepseek-ai/dsh-agent-spine-demo'

describe('imports of the bundle from the demo package keep working after its move to dsh-agent-spine', () => {
  it('re-exports the very same bundle, package list and config schema', () => {
    expect(DemoDefault).toBe(AgentSpine)
    expect(DemoSpine).toBe(AgentSpine)
    expect(DemoPackages).toBe(SPINE_PACKAGES)
    expect(DemoConfig).toBe(SpineConfig)
  })
})
