/**
 * The phantom key that separates one brand from another. It exists only in the
 * type system: no value ever carries it at run time.
 */
declare const brand: unique symbol

/**
 * A string that the type system keeps apart from other strings.
 *
 * `Branded<'SessionId'>` and `Branded<'CallId'>` are both plain strings at run
 * time, but neither is assignable to the other, and a bare `string` is
 * assignable to neither: a value gets a brand only through its owner's
 * cast-only factory (for example `SessionId(raw)` in dsh-session). Branded
 * values are still strings, so they read, compare, serialize and index like any
 * other string.
 */
export type Branded<B extends string> = string & { readonly [brand]: B }

/** The brand name carried by a branded type (`BrandOf<SessionId>` is `'SessionId'`). */
export type BrandOf<T> = T extends { readonly [brand]: infer B } ? B : never
