export type { BrandOf, Branded } from './branded'
