/**
 * docs/ARCHITECTURE.md says where each part lives: every file it names (a path, or a path's end
 * such as `pipeline/quotas.ts`) is a file of the repository, so a part moved or removed without
 * the page changing fails here.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const root = new URL('../', import.meta.url)

test('docs/ARCHITECTURE.md names only files that exist', () => {
  const git = (...args: string[]): string[] => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean)
  const files = [...git('ls-files'), ...git('ls-files', '--others', '--exclude-standard')]
  const doc = readFileSync(new URL('docs/ARCHITECTURE.md', root), 'utf8')
  // a name in backticks ending in a source or config extension; one starting with / is a URL path
  const named = new Set([...doc.matchAll(/`([\w.-][\w./-]*\.(?:ts|py|mjs|js|json|sh|yaml))`/g)].map((m) => m[1] as string))
  assert.ok(named.size > 50, `the page names files (${named.size})`)
  const missing = [...named].filter((name) => !files.some((f) => f === name || f.endsWith(`/${name}`)))
  assert.deepEqual(missing, [], 'named in docs/ARCHITECTURE.md, not in the repository')
})
