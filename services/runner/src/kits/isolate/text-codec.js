// UTF-8 TextEncoder/TextDecoder for a bare V8 isolate (no Web APIs there). Evaluated inside the
// isolate before Pyodide's glue; pure JavaScript, no host callbacks.
;(() => {
  function encodeInto(str, out) {
    let read = 0
    let written = 0
    const n = str.length
    const cap = out.length
    for (let i = 0; i < n; i++) {
      let c = str.charCodeAt(i)
      let units = 1
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = str.charCodeAt(i + 1)
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)
          units = 2
        }
      }
      if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd
      const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4
      if (written + size > cap) break
      if (size === 1) out[written++] = c
      else if (size === 2) {
        out[written++] = 0xc0 | (c >> 6)
        out[written++] = 0x80 | (c & 63)
      } else if (size === 3) {
        out[written++] = 0xe0 | (c >> 12)
        out[written++] = 0x80 | ((c >> 6) & 63)
        out[written++] = 0x80 | (c & 63)
      } else {
        out[written++] = 0xf0 | (c >> 18)
        out[written++] = 0x80 | ((c >> 12) & 63)
        out[written++] = 0x80 | ((c >> 6) & 63)
        out[written++] = 0x80 | (c & 63)
      }
      read += units
      if (units === 2) i++
    }
    return { read, written }
  }
  class TextEncoder {
    get encoding() {
      return 'utf-8'
    }
    encode(str = '') {
      str = String(str)
      const out = new Uint8Array(str.length * 3)
      const { written } = encodeInto(str, out)
      return out.slice(0, written)
    }
    encodeInto(str, out) {
      return encodeInto(String(str), out)
    }
  }
  class TextDecoder {
    constructor(label = 'utf-8', options = {}) {
      const l = String(label).toLowerCase()
      if (l === 'utf-16le' || l === 'utf-16') this.utf16 = true
      else if (l !== 'utf-8' && l !== 'utf8')
        throw new RangeError('TextDecoder: only utf-8 and utf-16le are supported, not ' + label)
      this.fatal = !!options.fatal
    }
    get encoding() {
      return this.utf16 ? 'utf-16le' : 'utf-8'
    }
    decode(input) {
      if (input === undefined) return ''
      const b =
        input instanceof Uint8Array
          ? input
          : ArrayBuffer.isView(input)
            ? new Uint8Array(input.buffer, input.byteOffset, input.byteLength)
            : new Uint8Array(input)
      if (this.utf16) {
        const parts = []
        for (let i = 0; i + 1 < b.length; i += 16384) {
          const units = []
          for (let j = i; j + 1 < b.length && j < i + 16384; j += 2) units.push(b[j] | (b[j + 1] << 8))
          parts.push(String.fromCharCode.apply(null, units))
        }
        return parts.join('')
      }
      let s = ''
      const parts = []
      const n = b.length
      let i = 0
      let chunk = []
      while (i < n) {
        const c = b[i]
        let cp = 0xfffd
        let need = 0
        if (c < 0x80) {
          cp = c
          need = 0
        } else if (c >= 0xc2 && c < 0xe0) {
          need = 1
          cp = c & 31
        } else if (c >= 0xe0 && c < 0xf0) {
          need = 2
          cp = c & 15
        } else if (c >= 0xf0 && c < 0xf5) {
          need = 3
          cp = c & 7
        } else {
          need = -1
        }
        i++
        if (need < 0) {
          if (this.fatal) throw new TypeError('invalid utf-8')
          cp = 0xfffd
        } else {
          // The Encoding Standard's ranges for the second byte: no overlong form, surrogate or code point past
          // U+10FFFF is ever begun, so a bad sequence is one U+FFFD per maximal valid prefix (as Python's
          // errors='replace' and Node's decoder give) and the byte that broke it starts over.
          let lower = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80
          let upper = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf
          let ok = true
          for (let k = 0; k < need; k++) {
            const d = b[i]
            if (i >= n || d < lower || d > upper) {
              ok = false
              break
            }
            lower = 0x80
            upper = 0xbf
            cp = (cp << 6) | (d & 63)
            i++
          }
          if (!ok) {
            if (this.fatal) throw new TypeError('invalid utf-8')
            cp = 0xfffd
          }
        }
        if (cp >= 0x10000) {
          cp -= 0x10000
          chunk.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 1023))
        } else chunk.push(cp)
        if (chunk.length >= 8192) {
          parts.push(String.fromCharCode.apply(null, chunk))
          chunk = []
        }
      }
      parts.push(String.fromCharCode.apply(null, chunk))
      s = parts.join('')
      return s
    }
  }
  globalThis.TextEncoder = TextEncoder
  globalThis.TextDecoder = TextDecoder
})()
