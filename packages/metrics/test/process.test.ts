import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Registry } from 'prom-client'
import { buildCommit, registerProcessMetrics } from '@sandfleet/metrics'

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)

test('buildCommit: SANDFLEET_COMMIT first, else HEAD of the checkout above (a branch file, packed-refs, a worktree, a detached HEAD), else empty', () => {
  const root = mkdtempSync(join(tmpdir(), 'sf-metrics-git-'))
  try {
    const repo = join(root, 'repo')
    mkdirSync(join(repo, '.git', 'refs', 'heads'), { recursive: true })
    mkdirSync(join(repo, 'services', 'gateway', 'src'), { recursive: true })
    const deep = join(repo, 'services', 'gateway', 'src')
    writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n')
    writeFileSync(join(repo, '.git', 'refs', 'heads', 'main'), `${A}\n`)
    assert.equal(buildCommit(deep, {}), A)
    assert.equal(buildCommit(deep, { SANDFLEET_COMMIT: 'from-the-image' }), 'from-the-image')
    rmSync(join(repo, '.git', 'refs', 'heads', 'main'))
    writeFileSync(join(repo, '.git', 'packed-refs'), `# pack-refs with: peeled\n${B} refs/heads/main\n`)
    assert.equal(buildCommit(deep, {}), B, 'a packed branch')
    // a worktree: .git is a file naming its gitdir, whose commondir holds the branches
    const wt = join(root, 'wt')
    const gitdir = join(repo, '.git', 'worktrees', 'wt')
    mkdirSync(gitdir, { recursive: true })
    mkdirSync(wt)
    writeFileSync(join(wt, '.git'), `gitdir: ${gitdir}\n`)
    writeFileSync(join(gitdir, 'HEAD'), 'ref: refs/heads/main\n')
    writeFileSync(join(gitdir, 'commondir'), '../..\n')
    assert.equal(buildCommit(wt, {}), B)
    writeFileSync(join(gitdir, 'HEAD'), `${A}\n`)
    assert.equal(buildCommit(wt, {}), A, 'a detached HEAD')
    assert.equal(buildCommit(join(root, 'elsewhere'), {}), '', 'no checkout above')
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('registerProcessMetrics: build info (commit unknown when not known) and the defaults, all under sandfleet_', async () => {
  const registry = new Registry()
  registerProcessMetrics(registry, { component: 'runner', version: '1.2.3' })
  const text = await registry.metrics()
  assert.match(
    text,
    new RegExp(
      `^sandfleet_build_info\\{component="runner",version="1\\.2\\.3",commit="unknown",node_version="${process.version.replace(/\./g, '\\.')}"\\} 1$`,
      'm'
    )
  )
  assert.match(text, /^sandfleet_process_resident_memory_bytes \d+/m)
  assert.match(text, /^sandfleet_nodejs_eventloop_lag_p99_seconds /m)
  for (const [, name] of text.matchAll(/^# TYPE (\S+)/gm)) assert.match(name, /^sandfleet_/)
})
