import { imageFormat, imagesLeftOut, pixelSize, type ImageBlock, type ImageFormat, type PixelSize } from '@deepseek-ai/dsh-llm'
import type { ImageLimits } from './config'

/** The Messages API's limits as Anthropic documents them (the vision guide, late 2026). */
export const imageLimitDefaults: Readonly<Required<ImageLimits>> = Object.freeze({
  mediaTypes: Object.freeze(['image/jpeg', 'image/png', 'image/gif', 'image/webp']) as string[],
  maxImages: 100,
  maxImageBytes: 5 * 1_048_576,
  maxTotalBytes: 24 * 1_048_576,
  maxSide: 8_000,
  manyImages: 20,
  manySide: 2_000,
})

const MB = 1_048_576
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`

/** The note sent instead of an image left out, saying why, in words that never change for the same image and limits. */
export const imageNotes = {
  older: (limits: Required<ImageLimits>) =>
    `[image omitted: earlier images are left out of the request to keep it within the provider's limits (${limits.maxImages} images, ${mb(limits.maxTotalBytes)}); the session still holds it]`,
  bytes: (bytes: number, limits: Required<ImageLimits>) =>
    `[image omitted: ${mb(bytes)}, over the provider's limit of ${mb(limits.maxImageBytes)} per image]`,
  side: (size: PixelSize, limits: Required<ImageLimits>) =>
    `[image omitted: ${size.width}×${size.height} px, over the provider's limit of ${limits.maxSide} px per side]`,
  format: (declared: string) => `[image omitted: its data (declared ${declared}) is not a JPEG, PNG, GIF or WebP image, the formats the provider takes]`,
  type: (format: string, taken: readonly string[]) =>
    taken.length === 0
      ? `[image omitted: ${format}; this provider takes no images]`
      : `[image omitted: ${format}, a format the provider does not take (${taken.join(', ')})]`,
  many: (size: PixelSize, limits: Required<ImageLimits>) =>
    `[image omitted: ${size.width}×${size.height} px, over the provider's limit of ${limits.manySide} px per side in a request with more than ${limits.manyImages} images]`,
}

/** The wire form of an image, or of the note that replaces it. */
export type WireImage = { type: 'image'; source: { type: 'base64'; media_type: string; data: string } } | { type: 'text'; text: string }

interface Sent {
  wire: WireImage
  bytes: number
  side: number
  size: PixelSize | undefined
}

/** What an image's header says: its format by signature, and its pixel size when readable. */
interface Header {
  format: ImageFormat | undefined
  size: PixelSize | undefined
}

/**
 * Header reads are remembered per image block: history messages are frozen
 * and reach every request of a session as the same objects, so each image's
 * header is read once, not once per step.
 */
const headers = new WeakMap<ImageBlock, Header>()

function headerOf(block: ImageBlock): Header {
  let header = headers.get(block)
  if (header === undefined) {
    const format = imageFormat(block.data)
    header = { format, size: format ? pixelSize(block.data) : undefined }
    if (Object.isFrozen(block)) headers.set(block, header)
  }
  return header
}

function replace(wire: WireImage, text: string): void {
  // In place: the block may already sit in a merged message or a tool result. Same keys, same order as a fresh text block.
  const slot = wire as Record<string, unknown>
  delete slot.source
  slot.type = 'text'
  slot.text = text
}

/**
 * Keeps one request's images within `ImageLimits`, as a function of the
 * history alone (two requests for the same history are byte-identical), and
 * so that the request's prefix changes rarely as the session grows:
 *
 * - An image too large on its own (bytes, or pixels per side), or whose data
 *   is not a JPEG, PNG, GIF or WebP image, is replaced by a note saying why,
 *   wherever it is. An image goes with the media type its data has (a PNG
 *   labelled `image/jpeg` goes as `image/png`): the API refuses a mismatch.
 * - The other images are replayed oldest first against the limits: when one
 *   would take the request over the count or the byte budget, the oldest
 *   images still sent are left out until what remains is at most half of each
 *   limit. The images left out are therefore always the oldest, and that set
 *   grows in batches (about half the count or half the bytes at a time), so
 *   the prefix up to the first image still sent changes once per batch, not
 *   once per new image. Replaying from the start each time keeps the adapter
 *   stateless: the same history gives the same cut.
 * - When more than `manyImages` images are still sent, those over `manySide`
 *   pixels are replaced by a note too.
 *
 * Cost: `image()` is called from the walk that maps the messages (no walk of
 * its own); `settle()` is one pass over the images the request carries.
 */
export class ImageBudget {
  private readonly sent: Sent[] = []

  constructor(private readonly limits: Required<ImageLimits>) {}

  /** The wire block for `block`: the image, recorded for `settle()`, or the note that replaces an image too large on its own. */
  image(block: ImageBlock): WireImage {
    const limits = this.limits
    const bytes = block.data.length
    if (bytes > limits.maxImageBytes) return { type: 'text', text: imageNotes.bytes(bytes, limits) }
    const { format, size } = headerOf(block)
    // The API decodes only these four formats, and refuses data whose signature is not the declared type.
    if (format === undefined) return { type: 'text', text: imageNotes.format(block.mediaType) }
    if (!limits.mediaTypes.includes(format)) return { type: 'text', text: imageNotes.type(format, limits.mediaTypes) }
    const side = size ? Math.max(size.width, size.height) : 0
    if (size && side > limits.maxSide) return { type: 'text', text: imageNotes.side(size, limits) }
    const wire: WireImage = { type: 'image', source: { type: 'base64', media_type: format, data: block.data } }
    this.sent.push({ wire, bytes, side, size })
    return wire
  }

  /** Replaces, after the walk, the images the limits leave out (see the class comment). */
  settle(): void {
    const { sent, limits } = this
    const cut = imagesLeftOut(sent.map((image) => image.bytes), limits.maxImages, limits.maxTotalBytes)
    if (cut > 0) {
      const note = imageNotes.older(limits)
      for (let i = 0; i < cut; i++) replace(sent[i]!.wire, note)
    }
    if (sent.length - cut <= limits.manyImages) return
    for (let i = cut; i < sent.length; i++) {
      const { size, side, wire } = sent[i]!
      if (size && side > limits.manySide) replace(wire, imageNotes.many(size, limits))
    }
  }
}
