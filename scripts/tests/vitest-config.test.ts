import { describe, expect, it } from 'vitest'
import rootConfig from '../../vitest.config.ts'
import projects from '../../vitest.workspace.ts'

// The root config's generous ceilings only protect the suite on a loaded
// machine if every project inherits them.
describe('vitest configuration', () => {
  it('every inline project extends the root config', () => {
    const names = projects.map((project) => ({ name: project.test?.name, extends: project.extends }))
    expect(names).toEqual(names.map(({ name }) => ({ name, extends: true })))
  })

  it('a test runs with the root ceiling, not the 5 s default', ({ task }) => {
    expect(task.timeout).toBe(rootConfig.test?.testTimeout)
    expect(task.timeout).toBeGreaterThanOrEqual(30_000)
  })
})
