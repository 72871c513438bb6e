import { describe, expect, it } from 'vitest'
import { imageFormat, imagesLeftOut, pixelSize } from '../src'

/** The first bytes of a PNG file declaring `width` × `height` (signature, IHDR), base64. */
function png(width: number, height: number): string {
  const head = Buffer.alloc(33)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head, 0)
  head.writeUInt32BE(13, 8)
  head.write('IHDR', 12, 'latin1')
  head.writeUInt32BE(width, 16)
  head.writeUInt32BE(height, 20)
  return head.toString('base64')
}

describe('pixelSize', () => {
  it('reads the size PNG, GIF, WebP (lossy, lossless, extended) and JPEG headers declare; anything else is unknown', () => {
    const gif = Buffer.from('GIF89a\x20\x03\x58\x02\x00\x00\x00', 'latin1').toString('base64')
    const vp8 = Buffer.alloc(30)
    vp8.write('RIFF', 0, 'latin1')
    vp8.write('WEBPVP8 ', 8, 'latin1')
    Buffer.from([0x9d, 0x01, 0x2a]).copy(vp8, 23)
    vp8.writeUInt16LE(1024, 26)
    vp8.writeUInt16LE(768, 28)
    const vp8l = Buffer.alloc(30)
    vp8l.write('RIFF', 0, 'latin1')
    vp8l.write('WEBPVP8L', 8, 'latin1')
    vp8l[20] = 0x2f
    vp8l.writeUInt32LE((640 - 1) | ((480 - 1) << 14), 21)
    const vp8x = Buffer.alloc(30)
    vp8x.write('RIFF', 0, 'latin1')
    vp8x.write('WEBPVP8X', 8, 'latin1')
    vp8x.writeUIntLE(9000 - 1, 24, 3)
    vp8x.writeUIntLE(20 - 1, 27, 3)
    // SOI, an APP0 segment, a DQT segment, then SOF2 (progressive) with height 1080 and width 1920.
    const jpeg = Buffer.concat([
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
      Buffer.alloc(14),
      Buffer.from([0xff, 0xdb, 0x00, 0x05, 1, 2, 3]),
      Buffer.from([0xff, 0xff, 0xc2, 0x00, 0x11, 0x08, 0x04, 0x38, 0x07, 0x80]),
      Buffer.alloc(16),
    ])
    expect([png(3000, 20), gif, vp8, vp8l, vp8x, jpeg, 'aGVsbG8gd29ybGQ=', ''].map((data) => pixelSize(typeof data === 'string' ? data : data.toString('base64')))).toEqual([
      { width: 3000, height: 20 },
      { width: 800, height: 600 },
      { width: 1024, height: 768 },
      { width: 640, height: 480 },
      { width: 9000, height: 20 },
      { width: 1920, height: 1080 },
      undefined,
      undefined,
    ])
  })
})

describe('imageFormat', () => {
  it('names JPEG, PNG, GIF and WebP by their signature, whatever they are labelled; anything else (SVG, BMP, text, a cut PNG signature) is none', () => {
    const b64 = (bytes: number[] | string) => (typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes)).toString('base64')
    expect(
      [
        b64([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]),
        png(1, 1),
        b64('GIF87a\x01\x00\x01\x00'),
        b64('RIFF\x00\x00\x00\x00WEBPVP8 '),
        b64('<svg xmlns="http://www.w3.org/2000/svg"/>'),
        b64('BM\x36\x00\x00\x00\x00\x00'),
        b64([0x89, 0x50, 0x4e, 0x47]),
        '',
      ].map(imageFormat),
    ).toEqual(['image/jpeg', 'image/png', 'image/gif', 'image/webp', undefined, undefined, undefined, undefined])
  })
})

describe('imagesLeftOut', () => {
  it('leaves nothing out within the limits, then the oldest in batches down to half of the count', () => {
    const cuts = [99, 100, 101, 102, 150, 151, 152].map((n) => imagesLeftOut(Array(n).fill(1), 100, Infinity))
    // At the 101st image the oldest 51 go (50 remain with the new one), and that cut holds until the 152nd.
    expect(cuts).toEqual([0, 0, 51, 51, 51, 51, 102])
  })

  it('a longer history never leaves out fewer images than a shorter one (the prefix changes only at a new batch)', () => {
    const sizes = Array.from({ length: 400 }, (_, i) => 1 + ((i * 7919) % 13))
    let last = 0
    for (let n = 1; n <= sizes.length; n++) {
      const cut = imagesLeftOut(sizes.slice(0, n), 40, 120)
      expect(cut).toBeGreaterThanOrEqual(last)
      last = cut
    }
    expect(last).toBeGreaterThan(0)
  })

  it('cuts by bytes down to half of the byte budget, and always keeps the newest image', () => {
    expect(imagesLeftOut([4, 4, 4, 4], Infinity, 10)).toBe(2)
    expect(imagesLeftOut([4, 4, 4, 4, 4], Infinity, 10)).toBe(4)
    expect(imagesLeftOut([9, 9], Infinity, 10)).toBe(1)
    expect(imagesLeftOut([], 1, 1)).toBe(0)
  })
})
