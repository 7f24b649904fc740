/**
 * A PNG's pixels (8-bit RGB or RGBA, not interlaced: what Chromium's screenshots are), for tests that look at a
 * rendering.
 */
import { inflateSync } from 'node:zlib'

/** Decoded pixels: `rgba[(y * width + x) * 4 + c]`. */
export interface Pixels {
  width: number
  height: number
  rgba: Uint8Array
}

/** Decodes `png`; throws on a form it does not read. */
export function decodePng(png: Buffer): Pixels {
  if (png.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG')
  let pos = 8
  let width = 0
  let height = 0
  let channels = 0
  const idat: Buffer[] = []
  while (pos < png.length) {
    const len = png.readUInt32BE(pos)
    const type = png.toString('latin1', pos + 4, pos + 8)
    const data = png.subarray(pos + 8, pos + 8 + len)
    if (type === 'IHDR') {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      const depth = data[8]
      const color = data[9]
      if (depth !== 8 || (color !== 2 && color !== 6) || data[12] !== 0)
        throw new Error(`PNG form not read here: depth ${depth}, color ${color}, interlace ${data[12]}`)
      channels = color === 6 ? 4 : 3
    } else if (type === 'IDAT') idat.push(data)
    else if (type === 'IEND') break
    pos += 12 + len
  }
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const out = new Uint8Array(width * height * 4)
  let prev = new Uint8Array(stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = Uint8Array.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)))
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels] : 0
      const b = prev[i]
      const c = i >= channels ? prev[i - channels] : 0
      let p = 0
      if (filter === 1) p = a
      else if (filter === 2) p = b
      else if (filter === 3) p = (a + b) >> 1
      else if (filter === 4) {
        const q = a + b - c
        const pa = Math.abs(q - a)
        const pb = Math.abs(q - b)
        const pc = Math.abs(q - c)
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
      }
      line[i] = (line[i] + p) & 0xff
    }
    for (let x = 0; x < width; x++) {
      out.set(
        [
          line[x * channels],
          line[x * channels + 1],
          line[x * channels + 2],
          channels === 4 ? line[x * channels + 3] : 255
        ],
        (y * width + x) * 4
      )
    }
    prev = line
  }
  return { width, height, rgba: out }
}

/** Pixels within `tolerance` of the colour `#rrggbb`. */
export function countColour(p: Pixels, hex: string, tolerance = 12): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))
  let n = 0
  for (let i = 0; i < p.rgba.length; i += 4) {
    if (
      Math.abs(p.rgba[i] - r) <= tolerance &&
      Math.abs(p.rgba[i + 1] - g) <= tolerance &&
      Math.abs(p.rgba[i + 2] - b) <= tolerance
    )
      n++
  }
  return n
}

/** The box holding every pixel within `tolerance` of `#rrggbb`, or undefined when there is none. */
export function colourBounds(
  p: Pixels,
  hex: string,
  tolerance = 12
): { minX: number; maxX: number; minY: number; maxY: number } | undefined {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))
  let box: { minX: number; maxX: number; minY: number; maxY: number } | undefined
  for (let i = 0; i < p.rgba.length; i += 4) {
    if (
      Math.abs(p.rgba[i] - r) > tolerance ||
      Math.abs(p.rgba[i + 1] - g) > tolerance ||
      Math.abs(p.rgba[i + 2] - b) > tolerance
    )
      continue
    const x = (i / 4) % p.width
    const y = Math.floor(i / 4 / p.width)
    box =
      box === undefined
        ? { minX: x, maxX: x, minY: y, maxY: y }
        : {
            minX: Math.min(box.minX, x),
            maxX: Math.max(box.maxX, x),
            minY: Math.min(box.minY, y),
            maxY: Math.max(box.maxY, y)
          }
  }
  return box
}
