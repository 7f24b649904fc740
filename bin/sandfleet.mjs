#!/usr/bin/env -S node --no-node-snapshot
// The `sandfleet` CLI: runs cli/src/main.ts, from its bundle (cli-bundle.mjs, made from the
// sources by esbuild whenever they change) or, without one (SANDFLEET_NO_BUNDLE=1), through tsx.
// The isolate backends (javascript, pyodide) need Node's --no-node-snapshot: when this process
// lacks it (`node bin/sandfleet.mjs …`), the shim runs itself again with it (same arguments,
// stdio and exit code). The shebang and `npm start` pass it, so the usual paths start once.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const FLAG = '--no-node-snapshot'
const hasFlag = process.execArgv.includes(FLAG) || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(FLAG)
if (!hasFlag && process.env.SANDFLEET_NO_REEXEC !== '1') {
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
  // The sources' bundle (cli-bundle.mjs: rebuilt when a source changed); tsx when there is none.
  const bundle =
    process.env.SANDFLEET_NO_BUNDLE === '1' ? undefined : await (await import('./cli-bundle.mjs')).cliBundle()
  if (bundle !== undefined) {
    process.setSourceMapsEnabled(true)
    // The pyodide backend's host process starts from the same bundle (pyodide-host.ts). Set
    // here, never inherited: a value from another checkout's CLI must not reach this one's.
    process.env._SANDFLEET_BUNDLE_PYODIDE_HOST = fileURLToPath(new URL('pyodide-host.js', bundle))
    await import(bundle)
  } else {
    delete process.env._SANDFLEET_BUNDLE_PYODIDE_HOST
    const { register } = await import('tsx/esm/api')
    register()
    await import('../cli/src/main.ts')
  }
}
