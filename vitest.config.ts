import { defineConfig } from 'vitest/config'
import projects from './vitest.workspace.ts'

export default defineConfig({
  test: {
    projects,
    // Property tests and lifecycle tests drive many interleavings; keep a
    // generous ceiling so a slow CI machine does not turn them into flakes.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
