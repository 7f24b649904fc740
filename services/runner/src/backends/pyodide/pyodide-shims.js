// Shims that let Pyodide's glue boot in a bare V8 isolate (shell mode: no Node, no Web APIs).
// Evaluated after text-codec.js and before pyodide.asm.js and pyodide.js. The host sets, before
// this runs: __sf_wasm (the compiled pyodide.asm.wasm module), __sf_stdlib (python_stdlib.zip),
// __sf_lock (pyodide-lock.json text), __sf_random (a host callback: n → n random bytes).
;(() => {
  const g = globalThis
  const logs = []
  const log = (...a) => {
    if (logs.length < 200) logs.push(a.map((x) => (x && x.stack) || String(x)).join(' '))
  }
  // Boot diagnostics only; job output never goes through console.
  g.console = { log, warn: log, error: log, info: log, debug: () => {}, trace: log }
  g.__sf_logs = logs
  const t0 = Date.now()
  g.performance = { now: () => Date.now() - t0, timeOrigin: t0 }
  // Entropy: a pool the host refills with every job, the host callback when it runs dry.
  const pool = { bytes: new Uint8Array(0), at: 0 }
  g.__sf_entropy = (bytes) => {
    pool.bytes = bytes
    pool.at = 0
  }
  const hostRandom = g.__sf_random
  g.crypto = {
    getRandomValues(view) {
      const out = new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
      let i = 0
      while (i < out.length) {
        if (pool.at >= pool.bytes.length) {
          pool.bytes = new Uint8Array(hostRandom(Math.max(256, out.length - i)))
          pool.at = 0
        }
        const n = Math.min(out.length - i, pool.bytes.length - pool.at)
        out.set(pool.bytes.subarray(pool.at, pool.at + n), i)
        pool.at += n
        i += n
      }
      return view
    }
  }
  g.queueMicrotask = (f) => {
    Promise.resolve().then(() => f())
  }
  // No timers in an isolate: a timeout callback runs as a microtask (the glue only defers with it).
  g.setTimeout = (f, ms, ...args) => {
    Promise.resolve().then(() => f(...args))
    return 1
  }
  g.clearTimeout = () => {}
  g.setInterval = () => 1
  g.clearInterval = () => {}
  const files = { '/p/pyodide-lock.json': g.__sf_lock }
  g.read = (p) => {
    if (p in files) return files[p]
    throw new Error('no file ' + p)
  }
  g.readbuffer = (p) => {
    if (p === '/p/python_stdlib.zip') return g.__sf_stdlib
    if (p === '/p/pyodide.asm.wasm') return new ArrayBuffer(8)
    throw new Error('no file ' + p)
  }
  g.load = (p) => {
    throw new Error('load ' + p)
  }
  // The operator's package zip (the host sets __sf_packages): a file in the isolate's own file
  // system, written at every boot (the memory snapshot holds sys.path, not the file system).
  g.__sf_mountPackages = (py) => {
    if (g.__sf_packages === undefined) return
    py.FS.mkdirTree('/lib/sandfleet')
    py.FS.writeFile('/lib/sandfleet/packages.zip', g.__sf_packages)
    delete g.__sf_packages
  }
  // The async WebAssembly API never resolves in isolated-vm 5.0.4: use the synchronous one, and
  // the module compiled once on the host. Every wasm import of the JS side is wrapped with a
  // counter, so the driver sees a job that touched JavaScript (see pyodide-job.js).
  const SYSTEM =
    /^(__syscall_|fd_|_emscripten|emscripten_|_PyEM_|_Py_|__call_sighandler|_setitimer_js|_tzset_js|_abort_js|_m(un)?map_js|_msync_js|_timegm_js|_mktime_js|_localtime_js|_gmtime_js|exit$|proc_exit|clock_|random_get|environ_|getprotobyname|getaddrinfo|getnameinfo|__assert_fail|invoke_)/
  const counter = { ffi: 0 }
  g.__sf_counter = counter
  const wrapImports = (imports) => {
    const done = new Set()
    for (const ns of ['env', 'wasi_snapshot_preview1']) {
      // (GOT.* are proxies that create entries when read: never enumerate them.)
      const table = imports[ns]
      if (table === undefined || done.has(table)) continue
      done.add(table)
      for (const name of Object.keys(table)) {
        const f = table[name]
        // Only JavaScript library functions (they carry a wasm signature); wasm exports pass as they are.
        if (typeof f !== 'function' || f.sig === undefined || f.__sf_counted === true || SYSTEM.test(name)) continue
        const wrapped = function (...args) {
          counter.ffi++
          return f.apply(this, args)
        }
        Object.defineProperty(wrapped, 'name', { value: name })
        wrapped.sig = f.sig
        wrapped.__sf_counted = true
        table[name] = wrapped
      }
    }
    return imports
  }
  const W = g.WebAssembly
  W.instantiate = async (src, imports) => {
    if (src instanceof W.Module) return new W.Instance(src, wrapImports(imports))
    const bytes = new Uint8Array(src.buffer ?? src)
    const m = bytes.byteLength === 8 ? g.__sf_wasm : new W.Module(bytes)
    return { module: m, instance: new W.Instance(m, wrapImports(imports)) }
  }
  W.compile = async (b) => new W.Module(b)
  W.instantiateStreaming = undefined
  W.compileStreaming = undefined
})()
