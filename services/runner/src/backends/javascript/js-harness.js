// The in-isolate side of the javascript driver. Evaluated once in every fresh context of a
// javascript sandbox (after text-codec.js); its completion value is the job function the host
// calls with (code, stdin, files or undefined, maxOutputBytes). The job returns the result, or
// null when the code's completion value is a promise: the host then calls `job(null)`, which
// returns a promise of the result. (So a synchronous job, the common case, is one call whose
// result is copied out, with no promise to carry across.) Pure JavaScript: it calls nothing of
// the host, and the host injects no function into the context. What user code sees is documented
// in docs/javascript-sandbox.md: console, TextEncoder/TextDecoder and the `sandfleet` global.
;(() => {
  'use strict'
  const g = globalThis
  const TE = g.TextEncoder
  const TD = g.TextDecoder
  const encoder = new TE()
  const decoder = new TD()
  const stringify = JSON.stringify
  const isArray = Array.isArray
  const StringOf = String
  const ObjectKeys = Object.keys
  const PromiseOf = Promise

  /** A short, Node-like rendering of one console argument. */
  function inspect(value, depth) {
    if (typeof value === 'string') return depth === 0 ? value : stringify(value)
    if (typeof value === 'bigint') return StringOf(value) + 'n'
    if (
      typeof value === 'symbol' ||
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      value === undefined ||
      value === null
    )
      return StringOf(value)
    if (typeof value === 'function') return '[Function: ' + (value.name || '(anonymous)') + ']'
    if (value instanceof Error) return value.stack || StringOf(value)
    if (depth > 2) return isArray(value) ? '[Array]' : '[Object]'
    if (isArray(value)) {
      const parts = []
      for (let i = 0; i < value.length && i < 100; i++) parts.push(inspect(value[i], depth + 1))
      if (value.length > 100) parts.push('... ' + (value.length - 100) + ' more items')
      return parts.length === 0 ? '[]' : '[ ' + parts.join(', ') + ' ]'
    }
    if (value instanceof Uint8Array) return 'Uint8Array(' + value.length + ')'
    const keys = ObjectKeys(value)
    if (keys.length === 0) return '{}'
    const parts = []
    for (let i = 0; i < keys.length && i < 100; i++) {
      const k = keys[i]
      parts.push((/^[A-Za-z_$][\w$]*$/.test(k) ? k : stringify(k)) + ': ' + inspect(value[k], depth + 1))
    }
    return '{ ' + parts.join(', ') + ' }'
  }

  function format(args) {
    const parts = []
    for (let i = 0; i < args.length; i++) {
      try {
        parts.push(inspect(args[i], 0))
      } catch (e) {
        parts.push('[uninspectable]')
      }
    }
    return parts.join(' ') + '\n'
  }

  // Wasm memory is not counted by the isolate's heap limit: the code gets no WebAssembly.
  delete g.WebAssembly

  let pending = null
  return function job(code, stdin, files, maxOutputBytes) {
    if (code === null) return pending
    const streams = {
      stdout: { parts: [], bytes: 0, truncated: false },
      stderr: { parts: [], bytes: 0, truncated: false }
    }
    function write(name, text) {
      const s = streams[name]
      if (s.truncated) return
      const size = encoder.encode(text).length
      if (s.bytes + size <= maxOutputBytes) {
        s.parts.push(text)
        s.bytes += size
        return
      }
      // Keep the prefix that fits (whole characters), drop the rest.
      const room = maxOutputBytes - s.bytes
      if (room > 0) {
        const bytes = encoder.encode(text)
        let cut = room
        while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--
        s.parts.push(decoder.decode(bytes.subarray(0, cut)))
        s.bytes += cut
      }
      s.truncated = true
    }
    const out = (...args) => {
      write('stdout', format(args))
    }
    const err = (...args) => {
      write('stderr', format(args))
    }
    g.console = Object.freeze({ log: out, info: out, debug: out, trace: err, error: err, warn: err, dir: out })

    const fs = new Map()
    if (files !== undefined) for (const path of ObjectKeys(files)) fs.set(path, files[path])
    const need = (path) => {
      const data = fs.get(StringOf(path))
      if (data === undefined) throw new Error('ENOENT: no such file: ' + path)
      return data
    }
    const sandfleet = Object.freeze({
      stdin,
      readFile: (path) => decoder.decode(need(path)),
      readBytes: (path) => need(path).slice(),
      writeFile: (path, data) => {
        fs.set(StringOf(path), typeof data === 'string' ? encoder.encode(data) : new Uint8Array(data))
      },
      listFiles: () => [...fs.keys()]
    })
    Object.defineProperty(g, 'sandfleet', { value: sandfleet, enumerable: false, configurable: false, writable: false })

    const result = () => {
      const outFiles = {}
      for (const [path, data] of fs) outFiles[path] = data
      return {
        stdout: streams.stdout.parts.join(''),
        stderr: streams.stderr.parts.join(''),
        truncated: { stdout: streams.stdout.truncated, stderr: streams.stderr.truncated },
        files: outFiles
      }
    }
    // The host reads partial output after a timeout through this (non-enumerable) global.
    Object.defineProperty(g, '__sandfleet_partial', { value: result, enumerable: false })

    const describe = (e) => {
      let type = 'Error'
      let message = ''
      let stack = ''
      try {
        if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
          type = StringOf(e.name || (e.constructor && e.constructor.name) || 'Error')
          message = StringOf(e.message === undefined ? e : e.message)
          stack = typeof e.stack === 'string' ? e.stack : ''
        } else {
          type = 'Uncaught'
          message = StringOf(e)
        }
      } catch (inner) {
        message = '[the thrown value could not be described]'
      }
      return { type, message, traceback: stack }
    }
    const finish = (error) => {
      const r = result()
      r.error = error === undefined ? null : describe(error)
      if (r.error !== null)
        write('stderr', 'Uncaught ' + (r.error.traceback || r.error.type + ': ' + r.error.message) + '\n')
      const again = result()
      r.stderr = again.stderr
      r.truncated = again.truncated
      return r
    }
    let value
    try {
      value = (0, eval)(code + '\n//# sourceURL=main.js')
    } catch (e) {
      return finish(e)
    }
    if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
      pending = PromiseOf.resolve(value).then(
        () => finish(undefined),
        (e) => finish(e)
      )
      return null
    }
    return finish(undefined)
  }
})()
