// Probe (not production code): boots Pyodide 0.29.5 in a bare isolated-vm isolate, makes a memory
// snapshot, boots three isolates from it and measures a job and a wasm-memory restore.
// Run: node --no-node-snapshot scripts/pyodide-restore-probe.mjs (see docs/pyodide-driver-design.md).
import ivm from 'isolated-vm'
import { readFileSync } from 'node:fs'
const dir = new URL('../node_modules/pyodide/', import.meta.url).pathname
let glue = readFileSync(dir + 'pyodide.asm.js', 'utf8')
glue = glue.replace('var initRandomFill=()=>{', 'var initRandomFill=()=>{return view=>crypto.getRandomValues(view);')
const loader = readFileSync(dir + 'pyodide.js', 'utf8')
const wasmMod = new WebAssembly.Module(readFileSync(dir + 'pyodide.asm.wasm'))
const stdlib = readFileSync(dir + 'python_stdlib.zip')
const lock = readFileSync(dir + 'pyodide-lock.json', 'utf8')
const shims =
  readFileSync(new URL('../services/runner/src/kits/isolate/text-codec.js', import.meta.url).pathname, 'utf8') +
  `
globalThis.console = { log: (...a) => __log(a.join(' ')), warn: (...a) => __log(a.join(' ')), error: (...a) => __log(a.join(' ')), info: ()=>{}, debug: ()=>{} };
globalThis.performance = { now: () => __now() };
globalThis.crypto = { getRandomValues: (v) => { const b = new Uint8Array(v.buffer, v.byteOffset, v.byteLength); b.set(new Uint8Array(__random(b.length))); return v } };
globalThis.queueMicrotask = (f) => Promise.resolve().then(f);
globalThis.setTimeout = (f, ms) => { Promise.resolve().then(f); return 1 };
globalThis.clearTimeout = () => {};
const files = { '/p/pyodide-lock.json': __lock };
globalThis.read = (p) => { if (p in files) return files[p]; throw new Error('no file ' + p) };
globalThis.readbuffer = (p) => { if (p === '/p/python_stdlib.zip') return __stdlib; if (p === '/p/pyodide.asm.wasm') return new ArrayBuffer(8); throw new Error('no file ' + p) };
globalThis.load = (p) => { throw new Error('load ' + p) };
const origInst = WebAssembly.instantiate;
WebAssembly.instantiate = async (src, imports) => {
  if (src instanceof WebAssembly.Module) return new WebAssembly.Instance(src, imports);
  const bytes = new Uint8Array(src.buffer ?? src);
  const m = bytes.byteLength === 8 ? __wasm : new WebAssembly.Module(bytes);
  return { module: m, instance: new WebAssembly.Instance(m, imports) };
};
WebAssembly.compile = async (b) => new WebAssembly.Module(b);
`
function mk() {
  const iso = new ivm.Isolate({ memoryLimit: 512 })
  const ctx = iso.createContextSync()
  const g = ctx.global
  g.setSync('globalThis', g.derefInto())
  g.setSync('__log', new ivm.Callback((s) => console.log('[iso]', s)))
  g.setSync('__now', new ivm.Callback(() => performance.now()))
  g.setSync(
    '__random',
    new ivm.Callback((n) => {
      const b = new Uint8Array(n)
      crypto.getRandomValues(b)
      return new ivm.ExternalCopy(b.buffer).copyInto()
    })
  )
  g.setSync('__lock', lock)
  g.setSync(
    '__stdlib',
    new ivm.ExternalCopy(stdlib.buffer.slice(stdlib.byteOffset, stdlib.byteOffset + stdlib.byteLength)).copyInto({
      release: true
    })
  )
  g.setSync('__wasm', new ivm.ExternalCopy(wasmMod).copyInto())
  iso.compileScriptSync(shims).runSync(ctx)
  iso.compileScriptSync(glue).runSync(ctx)
  iso.compileScriptSync(loader).runSync(ctx)
  return { iso, ctx }
}
let t = performance.now()
const a = mk()
const snapBuf = await a.ctx.eval(
  `(async () => { globalThis.py = await loadPyodide({ indexURL: '/p/', _makeSnapshot: true }); const s = py.makeMemorySnapshot(); return s })()`,
  { promise: true, copy: true }
)
console.log('snap', snapBuf.byteLength)
a.iso.dispose()
for (let k = 0; k < 3; k++) {
  t = performance.now()
  const b = mk()
  b.ctx.global.setSync('__snap', new ivm.ExternalCopy(snapBuf).copyInto({ release: true }))
  await b.ctx.eval(
    `(async () => { globalThis.py = await loadPyodide({ indexURL: '/p/', _loadSnapshot: __snap }); })()`,
    { promise: true }
  )
  console.log('snapshot boot', performance.now() - t)
  const r = await b.ctx.eval(`(() => {
    const M = py._module
    py.runPython("import sys, builtins\\ndef run(code):\\n    import io\\n    out = io.StringIO(); old = sys.stdout; sys.stdout = out\\n    try:\\n        exec(compile(code, '<exec>', 'exec'), {'__name__': '__main__'})\\n    except BaseException as e:\\n        out.write(repr(e))\\n    finally:\\n        sys.stdout = old\\n    return out.getvalue()\\n")
    const run = py.globals.get('run')
    const sbrk = () => M.HEAPU32[M._emscripten_get_sbrk_ptr() >> 2]
    const base = M.HEAPU8.slice(0, sbrk())
    const res = []
    let t0 = performance.now()
    res.push(run('print(1+1)'))
    res.push('run ' + (performance.now() - t0))
    t0 = performance.now()
    res.push(run('import builtins, json; builtins.foo = 2; json.dumps = None; x = [0]*10**6; print("set")'))
    res.push('run2 ' + (performance.now() - t0) + ' sbrk ' + sbrk() + ' base ' + base.length + ' buf ' + M.HEAPU8.length)
    t0 = performance.now()
    const hi = sbrk()
    M.HEAPU8.set(base, 0)
    M.HEAPU8.fill(0, base.length, hi)
    res.push('restore ' + (performance.now() - t0))
    res.push(run('import builtins, json; print(hasattr(builtins, "foo"), json.dumps)'))
    for (let i = 0; i < 20; i++) { t0 = performance.now(); run('print(1+1)'); const t1 = performance.now(); M.HEAPU8.set(base, 0); const t2 = performance.now(); if (i > 16) res.push('job ' + (t1 - t0) + ' restore ' + (t2 - t1)) }
    res.push(run('import json; print(json.dumps({"a": [1,2]}))'))
    return res.join('\\n')
  })()`)
  console.log(r)
  b.iso.dispose()
}
process.exit(0)
