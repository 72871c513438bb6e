/** An image's size in pixels, as its file header declares it. */
export interface PixelSize {
  width: number
  height: number
}

/**
 * `length` bytes of the base64 text `data` from byte `start`, decoding only
 * the 4-character groups that hold them (a header read never decodes the
 * whole image). Fewer bytes when the data ends first.
 */
function bytesAt(data: string, start: number, length: number): Buffer {
  const first = Math.floor(start / 3)
  const last = Math.ceil((start + length) / 3)
  const decoded = Buffer.from(data.slice(first * 4, last * 4), 'base64')
  const from = start - first * 3
  return decoded.subarray(from, from + length)
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

function png(data: string): PixelSize | undefined {
  const head = bytesAt(data, 0, 24)
  if (head.length < 24 || PNG.some((byte, i) => head[i] !== byte) || head.toString('latin1', 12, 16) !== 'IHDR') return undefined
  return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) }
}

function gif(data: string): PixelSize | undefined {
  const head = bytesAt(data, 0, 10)
  if (head.length < 10 || !/^GIF8[79]a$/.test(head.toString('latin1', 0, 6))) return undefined
  return { width: head.readUInt16LE(6), height: head.readUInt16LE(8) }
}

function webp(data: string): PixelSize | undefined {
  const head = bytesAt(data, 0, 30)
  if (head.length < 30 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WEBP') return undefined
  switch (head.toString('latin1', 12, 16)) {
    case 'VP8 ':
      // A lossy key frame: start code 9d 01 2a, then 14-bit width and height.
      if (head[23] !== 0x9d || head[24] !== 0x01 || head[25] !== 0x2a) return undefined
      return { width: head.readUInt16LE(26) & 0x3fff, height: head.readUInt16LE(28) & 0x3fff }
    case 'VP8L': {
      // Lossless: signature 0x2f, then width − 1 and height − 1 in 14 bits each.
      if (head[20] !== 0x2f) return undefined
      const bits = head.readUInt32LE(21)
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
    }
    case 'VP8X':
      // Extended: the canvas's width − 1 and height − 1 in 24 bits each.
      return { width: head.readUIntLE(24, 3) + 1, height: head.readUIntLE(27, 3) + 1 }
    default:
      return undefined
  }
}

/** Start-of-frame markers (every SOFn but the DHT, JPG and DAC codes that share the range). */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf])

function jpeg(data: string): PixelSize | undefined {
  const soi = bytesAt(data, 0, 2)
  if (soi[0] !== 0xff || soi[1] !== 0xd8) return undefined
  const end = Math.floor((data.length * 3) / 4)
  let at = 2
  // Segments before the frame header are few (APPn, DQT, DHT, COM); a file that needs more is not read.
  for (let segments = 0; segments < 64 && at + 9 <= end; segments++) {
    const seg = bytesAt(data, at, 9)
    if (seg[0] !== 0xff) return undefined
    const marker = seg[1]!
    if (marker === 0xff) {
      at += 1 // a fill byte before a marker
      continue
    }
    if (SOF.has(marker)) return { width: seg.readUInt16BE(7), height: seg.readUInt16BE(5) }
    if (marker === 0xd9 || marker === 0xda) return undefined // the end, or scan data, before any frame header
    at += marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8) ? 2 : 2 + seg.readUInt16BE(2)
  }
  return undefined
}

/** The image formats every provider dsh has an adapter for takes, as their media types. */
export type ImageFormat = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'

/**
 * The format of base64 image data by its signature (its first 12 bytes), or
 * `undefined` when it is none of JPEG, PNG, GIF and WebP: providers decode
 * only these, and by the bytes, whatever the media type says.
 */
export function imageFormat(data: string): ImageFormat | undefined {
  const head = bytesAt(data, 0, 12)
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg'
  if (head.length >= 8 && PNG.every((byte, i) => head[i] === byte)) return 'image/png'
  if (head.length >= 6 && /^GIF8[79]a$/.test(head.toString('latin1', 0, 6))) return 'image/gif'
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'image/webp'
  return undefined
}

/**
 * The pixel size a PNG, GIF, WebP or JPEG image declares in its header, or
 * `undefined` when the data is none of these or its header cannot be read
 * (the image is then sent, and the provider judges it). The format is taken
 * from the data's own signature, not from its declared media type. Reads a
 * few dozen bytes (a JPEG: a few per segment before its frame header).
 */
export function pixelSize(data: string): PixelSize | undefined {
  try {
    return png(data) ?? gif(data) ?? webp(data) ?? jpeg(data)
  } catch {
    // A truncated header (a read past the decoded bytes): unknown, not an error.
    return undefined
  }
}

/**
 * How many of a request's images, oldest first, to leave out so that it
 * keeps within `maxImages` and `maxTotalBytes` (pass `Infinity` for a limit
 * not enforced), given each image's size in `bytes` in history order.
 *
 * The images are replayed oldest first: when one would take the request
 * over a limit, the oldest still sent are left out until what remains is at
 * most half of each limit. The images left out are therefore always the
 * oldest, and that number grows in batches (about half a limit at a time) as
 * the history grows: replaying a longer history repeats the same steps, so
 * a request's prefix up to its first image still sent changes once per
 * batch, not once per new image, and the same history gives the same cut.
 * The newest image always stays (alone, an image is within both limits:
 * the caller replaces one too large on its own first). One pass.
 */
export function imagesLeftOut(bytes: readonly number[], maxImages: number, maxTotalBytes: number): number {
  const halfCount = Math.floor(maxImages / 2)
  const halfBytes = maxTotalBytes / 2
  let cut = 0
  let total = 0
  for (let i = 0; i < bytes.length; i++) {
    total += bytes[i]!
    if (i + 1 - cut <= maxImages && total <= maxTotalBytes) continue
    while (cut < i && (i + 1 - cut > halfCount || total > halfBytes)) total -= bytes[cut++]!
  }
  return cut
}

/**
 * A declared image media type as the providers compare it: without
 * parameters, lower case, and `image/jpg` (a common mislabel) as
 * `image/jpeg`.
 */
export function imageMediaType(declared: string): string {
  const type = declared.split(';')[0]!.trim().toLowerCase()
  return type === 'image/jpg' ? 'image/jpeg' : type
}
