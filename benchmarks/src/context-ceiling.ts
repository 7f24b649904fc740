/**
 * The ceiling a fresh context per job puts on the javascript driver here: isolates (as many as
 * the driver keeps, cores + 1) that do nothing but make an empty V8 context and release it, in a
 * loop, on isolated-vm's threads, with the V8 flags the driver sets. No HTTP, no harness, no
 * job: no javascript call can cost less CPU than its context. Only for side-by-side figures; not
 * part of the product.
 * Usage: node --no-node-snapshot --import tsx benchmarks/src/context-ceiling.ts [--seconds 5]
 * [--isolates N] [--memory-mb 128]; prints one JSON line: contexts/s, CPU ms per context.
 */
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { setFlagsFromString } from 'node:v8'
import ivm from 'isolated-vm'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    isolates: { type: 'string' },
    'memory-mb': { type: 'string', default: '128' }
  }
})
const seconds = Number(values.seconds)
const count = values.isolates !== undefined ? Number(values.isolates) : availableParallelism() + 1
// What the javascript driver sets before its first isolate (services/runner/src/kits/isolate/node-flags.ts).
for (const flag of ['--no-concurrent-recompilation', '--no-expose-wasm', '--no-validate-asm']) setFlagsFromString(flag)

const isolates = Array.from({ length: count }, () => new ivm.Isolate({ memoryLimit: Number(values['memory-mb']) }))
let made = 0
let stop = false
const loops = isolates.map(async (isolate) => {
  while (!stop) {
    const context = await isolate.createContext()
    context.release()
    made++
  }
})
// A second of warm-up (V8's own code, the heaps' first growth), then the measured window.
await new Promise((resolve) => setTimeout(resolve, 1000))
made = 0
const cpu = process.cpuUsage()
const started = performance.now()
await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
const used = process.cpuUsage(cpu)
const elapsedS = (performance.now() - started) / 1000
const contexts = made
stop = true
await Promise.all(loops)
const cpuMs = (used.user + used.system) / 1000
console.log(
  JSON.stringify({
    isolates: count,
    contexts,
    seconds: elapsedS,
    contextsPerS: contexts / elapsedS,
    cpuMsPerContext: cpuMs / contexts,
    cores: availableParallelism()
  })
)
for (const isolate of isolates) isolate.dispose()
// A process that used isolates can hang at exit otherwise (node-flags.ts).
process.exit(0)
