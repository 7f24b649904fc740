/**
 * The largest file a job may write is the same on the process backend (the executor's
 * RLIMIT_FSIZE) and on pyodide (a cap on its in-memory file system): the same code gets the same
 * status, error and file sizes on both, and the sandbox serves the next job.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveExecRequest } from '@sandfleet/protocol'
import { runnerConfig } from '../../src/config.ts'
import { silentLogger } from '../../src/logger.ts'
import { SANDBOX_MAX_FILE_MB, type Driver, type RunOutcome } from '../../src/sandbox/contract.ts'
import { ProcessDriver } from '../../src/backends/process/process-driver.ts'
import { PyodideDriver } from '../../src/backends/pyodide/pyodide-driver.ts'

// Caught: what each write and truncate did, and the sizes the file system holds after. (Written in
// chunks: a 100 MiB object would grow pyodide's wasm memory enough to retire its sandbox.)
const PROBE = [
  'import errno, os',
  'def attempt(label, f):',
  '    try:',
  '        f()',
  '        print(label, "ok")',
  '    except OSError as e:',
  '        print(label, errno.errorcode.get(e.errno), e.strerror)',
  'chunk = b"x" * (1 << 20)',
  'def big():',
  '    with open("big", "wb") as f:',
  '        for _ in range(100): f.write(chunk)',
  'attempt("write", big)',
  'print("size", os.path.getsize("big") >> 20)',
  'def append():',
  '    with open("big", "ab") as f: f.write(b"y")',
  'attempt("append", append)',
  'def truncate():',
  '    with open("sparse", "wb") as f: f.truncate(1 << 30)',
  'attempt("truncate", truncate)',
  'def small():',
  '    with open("small", "wb") as f: f.write(b"z" * (1 << 20))',
  'attempt("small", small)',
  'print("small", os.path.getsize("small"))'
].join('\n')

// Uncaught: the status and error the user sees.
const UNCAUGHT = 'chunk = b"x" * (1 << 20)\nf = open("big", "wb")\nfor _ in range(100): f.write(chunk)'

interface Seen {
  probe: RunOutcome
  uncaught: RunOutcome
  next: RunOutcome
}

async function observe(driver: Driver, id: string): Promise<Seen> {
  await driver.check()
  const sandbox = driver.createSandbox(id)
  try {
    await sandbox.start()
    const run = async (code: string): Promise<RunOutcome> =>
      await sandbox.execute({ request: resolveExecRequest({ code, timeout_ms: 20_000 }), maxOutputBytes: 65536 })
    return {
      probe: await run(PROBE),
      uncaught: await run(UNCAUGHT),
      next: await run('import os\nprint(os.listdir("."))')
    }
  } finally {
    await sandbox.close()
    await driver.close()
  }
}

test(`a job's file stops at ${SANDBOX_MAX_FILE_MB} MiB with the same OSError on the process and pyodide backends`, async () => {
  const config = runnerConfig({})
  const processSeen = await observe(new ProcessDriver({ config, logger: silentLogger }), 'fsize-process')
  const pyodideSeen = await observe(new PyodideDriver({ config, logger: silentLogger }), 'fsize-pyodide')
  const expected = [
    'write EFBIG File too large',
    `size ${SANDBOX_MAX_FILE_MB}`,
    'append EFBIG File too large',
    'truncate EFBIG File too large',
    'small ok',
    `small ${1 << 20}`,
    ''
  ].join('\n')
  for (const [name, seen] of [
    ['process', processSeen],
    ['pyodide', pyodideSeen]
  ] as const) {
    assert.equal(seen.probe.status, 'ok', `${name}: ${JSON.stringify(seen.probe)}`)
    assert.equal(seen.probe.stdout, expected, name)
    assert.deepEqual(
      [seen.uncaught.status, seen.uncaught.error?.type],
      ['error', 'OSError'],
      `${name}: ${JSON.stringify(seen.uncaught)}`
    )
    assert.match(seen.uncaught.error?.message ?? '', /File too large/, name)
    assert.deepEqual([seen.next.status, seen.next.stdout], ['ok', '[]\n'], `${name}: the next job starts clean`)
  }
  // errno's numbers differ (Linux 27, WebAssembly's 22); the user sees the same status and error
  const shape = (s: Seen): unknown => [
    s.probe.stdout,
    s.uncaught.status,
    s.uncaught.exit_code,
    s.uncaught.error?.type,
    s.uncaught.error?.message.replace(/\[Errno \d+\] /, ''),
    s.next.stdout
  ]
  assert.deepEqual(shape(pyodideSeen), shape(processSeen))
})
