// Probe (not production code): is a dirty-page restore cheaper than the full restore of the
// pyodide image? Restores an 18.8 MB image (4,576 pages of 4 KiB) of which 149 pages changed (what
// a trivial job dirties) by a full copy (what pyodide-job.js does) and by an exact compare of each
// page followed by a copy of the pages that differ: in JavaScript (Int32Array, Float64Array
// views, early exit per page) and with native memcmp (Buffer.compare, which an isolate does not
// have: the floor of any compare). Rounds are interleaved; medians of 30 restores each.
// Run: node scripts/pyodide-restore-compare-probe.mjs [rounds=3]
import { execFileSync } from 'node:child_process'
import { cpus, loadavg } from 'node:os'

const ROUNDS = Number(process.argv[2] ?? 3)
const PAGE = 4096
const PAGES = 4576
const DIRTY = 149
const SIZE = PAGES * PAGE
const base = new Uint8Array(SIZE)
for (let i = 0; i < SIZE; i += 7) base[i] = i & 255
const cur = new Uint8Array(SIZE)
const dirtyPages = Array.from({ length: DIRTY }, (_, i) => Math.floor((i * PAGES) / DIRTY))
const dirty = () => {
  cur.set(base)
  for (const p of dirtyPages) cur[p * PAGE + 100] ^= 1
}
const i32b = new Int32Array(base.buffer)
const i32c = new Int32Array(cur.buffer)
const f64b = new Float64Array(base.buffer)
const f64c = new Float64Array(cur.buffer)
const bufB = Buffer.from(base.buffer)
const bufC = Buffer.from(cur.buffer)
const copyPage = (p) => {
  cur.set(base.subarray(p * PAGE, (p + 1) * PAGE), p * PAGE)
}
const ways = {
  'full copy (TypedArray.set), as built': () => {
    cur.set(base)
    return PAGES
  },
  'compare Int32Array per page, copy the dirty': () => {
    let n = 0
    for (let p = 0; p < PAGES; p++) {
      const o = p * 1024
      for (let i = 0; i < 1024; i++)
        if (i32b[o + i] !== i32c[o + i]) {
          copyPage(p)
          n++
          break
        }
    }
    return n
  },
  'compare Float64Array per page, copy the dirty': () => {
    let n = 0
    // NaN !== NaN makes a clean page look dirty: a needless copy, never a missed one.
    for (let p = 0; p < PAGES; p++) {
      const o = p * 512
      for (let i = 0; i < 512; i++)
        if (f64b[o + i] !== f64c[o + i]) {
          copyPage(p)
          n++
          break
        }
    }
    return n
  },
  'native memcmp per page (not in an isolate), copy the dirty': () => {
    let n = 0
    for (let p = 0; p < PAGES; p++) {
      const a = p * PAGE
      if (bufB.compare(bufC, a, a + PAGE, a, a + PAGE) !== 0) {
        copyPage(p)
        n++
      }
    }
    return n
  }
}
const times = Object.fromEntries(Object.keys(ways).map((k) => [k, []]))
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, restore] of Object.entries(ways)) {
    for (let i = 0; i < 30; i++) {
      dirty()
      const t = performance.now()
      const n = restore()
      times[name].push(performance.now() - t)
      if (n < DIRTY || !Buffer.from(cur.buffer).equals(Buffer.from(base.buffer)))
        throw new Error(`${name} did not restore the image`)
    }
  }
}
let commit = '?'
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
} catch {}
console.log(
  `# ${new Date().toISOString()}, commit ${commit}, ${cpus().length} cores, node ${process.version}, load ${loadavg()[0].toFixed(2)} at the end; ${ROUNDS} interleaved rounds of 30`
)
console.log('| restore of 18.8 MB, 149 pages dirty | median ms | p90 ms |')
console.log('| --- | --- | --- |')
for (const [name, ts] of Object.entries(times)) {
  ts.sort((a, b) => a - b)
  console.log(
    `| ${name} | ${ts[Math.floor(ts.length / 2)].toFixed(2)} | ${ts[Math.floor(ts.length * 0.9)].toFixed(2)} |`
  )
}
