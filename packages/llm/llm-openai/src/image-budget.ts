import { imageMediaType, imagesLeftOut, type ImageBlock } from '@deepseek-ai/dsh-llm'
import type { ImageLimits } from './config'

/** An image as a chat-completions content part, or the text part that replaces it. */
export type WireImage = { type: 'image_url'; image_url: { url: string } } | { type: 'text'; text: string }

const MB = 1_000_000
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`

/** The text sent instead of an image left out, saying why, in words that never change for the same image and limits. */
export const imageNotes = {
  older: (limits: Readonly<ImageLimits>) =>
    `[image omitted: earlier images are left out of the request to keep it within the provider's limits (${[
      limits.maxImages !== undefined ? `${limits.maxImages} images` : undefined,
      limits.maxTotalBytes !== undefined ? mb(limits.maxTotalBytes) : undefined,
    ]
      .filter(Boolean)
      .join(', ')}); the session still holds it]`,
  bytes: (bytes: number, limit: number) => `[image omitted: ${mb(bytes)}, over the provider's limit of ${mb(limit)} per image]`,
  type: (declared: string, taken: readonly string[]) =>
    taken.length === 0
      ? `[image omitted: ${declared}; this provider takes no images]`
      : `[image omitted: ${declared}, a type the provider does not take (${taken.join(', ')})]`,
}

function replace(wire: WireImage, text: string): void {
  // In place: the part may already sit in a message. Same keys, same order as a fresh text part.
  const slot = wire as Record<string, unknown>
  delete slot.image_url
  slot.type = 'text'
  slot.text = text
}

/**
 * Keeps one request's images within `ImageLimits` (a limit left out is not
 * enforced), as a function of the history alone, so that two requests for the
 * same history are byte-identical and the request's prefix changes rarely as
 * the session grows:
 *
 * - An image over `maxImageBytes`, or of a type outside `mediaTypes`, is
 *   replaced by a note saying why.
 * - The other images are replayed oldest first: when one would take the
 *   request over `maxImages` or `maxTotalBytes`, the oldest still sent are
 *   left out until what remains is at most half of each limit. What is left
 *   out is always the oldest images, in batches (about half the limit at a
 *   time), so the prefix changes once per batch, not once per new image.
 *
 * Cost: `image()` is called from the walk that maps the messages (no walk of
 * its own); `settle()` is one pass over the images the request carries. Sizes
 * are base64 characters (the data URL's payload), an upper bound of the bytes.
 */
export class ImageBudget {
  private readonly sent: { wire: WireImage; bytes: number }[] = []
  private readonly maxImages: number
  private readonly maxImageBytes: number
  private readonly maxTotalBytes: number

  constructor(private readonly limits: Readonly<ImageLimits>) {
    this.maxImages = limits.maxImages ?? Infinity
    this.maxImageBytes = limits.maxImageBytes ?? Infinity
    this.maxTotalBytes = limits.maxTotalBytes ?? Infinity
  }

  /** The part for `block`: the image as a data URL, recorded for `settle()`, or the note that replaces an image too large on its own. */
  image(block: ImageBlock): WireImage {
    const bytes = block.data.length
    if (bytes > this.maxImageBytes) return { type: 'text', text: imageNotes.bytes(bytes, this.maxImageBytes) }
    const taken = this.limits.mediaTypes
    let type = block.mediaType
    if (taken !== undefined) {
      type = imageMediaType(type)
      if (!taken.includes(type)) return { type: 'text', text: imageNotes.type(block.mediaType, taken) }
    }
    const wire: WireImage = { type: 'image_url', image_url: { url: `data:${type};base64,${block.data}` } }
    this.sent.push({ wire, bytes })
    return wire
  }

  /** Replaces, after the walk, the images the limits leave out (see the class comment). */
  settle(): void {
    const { sent } = this
    const cut = imagesLeftOut(sent.map((image) => image.bytes), this.maxImages, this.maxTotalBytes)
    if (cut === 0) return
    const note = imageNotes.older(this.limits)
    for (let i = 0; i < cut; i++) replace(sent[i]!.wire, note)
  }
}
