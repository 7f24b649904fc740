#!/usr/bin/env node
// The `sandfleet` command of the @sandfleet/cli package (scripts/pack.mjs writes it): runs the
// CLI's bundle, dist/main.js. The isolate backends (javascript, pyodide) need Node's
// --no-node-snapshot: when this process lacks it, it runs itself again with it (same arguments,
// stdio and exit code).
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const FLAG = '--no-node-snapshot'
const hasFlag = process.execArgv.includes(FLAG) || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(FLAG)
if (!hasFlag) {
  const child = spawn(process.execPath, [FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' })
  // Ctrl-C in a terminal reaches the child through its process group; forward it only otherwise.
  process.on('SIGINT', () => {
    if (process.stdin.isTTY !== true) child.kill('SIGINT')
  })
  for (const signal of ['SIGTERM', 'SIGHUP'])
    process.on(signal, () => {
      child.kill(signal)
    })
  child.on('exit', (code, signal) => {
    process.exit(code ?? (signal !== null ? 1 : 0))
  })
} else {
  process.setSourceMapsEnabled(true)
  // The pyodide backend's host process starts from the bundle's own entry.
  process.env._SANDFLEET_BUNDLE_PYODIDE_HOST = fileURLToPath(new URL('../dist/pyodide-host.js', import.meta.url))
  // The commit the package was built from (sandfleet_build_info), not that of a checkout around it.
  process.env.SANDFLEET_COMMIT ??= '__SANDFLEET_COMMIT__'
  await import('../dist/main.js')
}
