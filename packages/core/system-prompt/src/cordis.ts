// The one place this package imports Cordis from, so a version bump is one edit.
export { Context, Service, symbols } from 'cordis'
export type { Fiber } from 'cordis'
