import type { SourceFile } from './events-catalog.mjs'

export const SESSION_EVENTS_PATH: string
export interface SessionEventField { name: string; type: string; doc: string }
export interface SessionEventEntry {
  type: string
  builtIn: boolean
  package?: string
  path: string
  line: number
  doc: string
  shape: string
  fields: SessionEventField[]
  refs: string[]
  registration?: { ignorable: boolean; projected: boolean; by: Set<string | undefined> }
}
export interface ReferencedType {
  key: string
  name: string
  pkg: string
  refs: string[]
  parts: { package?: string; path: string; augmentation: boolean; text: string }[]
}
export interface SessionEventsReference {
  events: SessionEventEntry[]
  envelope: SessionEventField[]
  envelopeSource?: { path: string; doc: string }
  types: ReferencedType[]
}
export function extractSessionEvents(files: SourceFile[]): SessionEventsReference
export function renderSessionEvents(reference: SessionEventsReference): string
export function buildSessionEvents(root: string): string
