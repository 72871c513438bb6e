// The one place this package imports Cordis from, so a version bump is one edit.
export { Context, symbols } from 'cordis'
