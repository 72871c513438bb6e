export interface SourceFile { path: string; text: string; package?: string }
export interface CatalogEvent {
  name: string
  mode: 'emit' | 'parallel' | 'serial' | 'bail' | 'waterfall'
  doc: string
  signature: string
  path: string
  line: number
  package?: string
}
export function listSources(dir: string): string[]
export function packageSources(root: string): string[]
export function packageName(root: string, file: string): string | undefined
export function extractEvents(files: SourceFile[]): CatalogEvent[]
export function renderCatalog(events: CatalogEvent[]): string
export function buildCatalog(root: string): string
export const CATALOG_PATH: string
