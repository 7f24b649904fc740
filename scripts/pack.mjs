#!/usr/bin/env node
// `npm run pack [-- --out DIR]`: the installable packages, as npm tarballs in DIR (default
// dist/): @sandfleet/protocol, @sandfleet/command-line, @sandfleet/client and @sandfleet/trainer (JavaScript with type
// declarations, scripts/pack/libraries.mjs) and @sandfleet/cli (the `sandfleet` command, one
// bundle, scripts/pack/cli.mjs). Each is staged in a folder of its own under .cache/pack/ (one
// per run, removed after it, so that runs at once never meet) and packed there with `npm pack`; the workspaces
// themselves keep exporting their TypeScript sources. Prints the tarballs' paths, one a line.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { stageLibraries } from './pack/libraries.mjs'
import { stageCli } from './pack/cli.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The commit HEAD names, or '' outside a git checkout. */
function headCommit() {
  const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' })
  return git.status === 0 ? git.stdout.trim() : ''
}

/** Packs the staged folder `dir` into `out`; returns the tarball's path. */
function npmPack(dir, out) {
  const run = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
    cwd: dir,
    encoding: 'utf8'
  })
  if (run.status !== 0) throw new Error(`pack: npm pack in ${dir} failed\n${run.stderr}`)
  return join(out, JSON.parse(run.stdout)[0].filename)
}

/** Builds, stages and packs every published package into `out`; returns the tarballs' paths. */
export async function pack(out) {
  mkdirSync(join(ROOT, '.cache/pack'), { recursive: true })
  const work = mkdtempSync(join(ROOT, '.cache/pack/run-'))
  try {
    mkdirSync(out, { recursive: true })
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    const common = { engines: root.engines }
    const staged = [...stageLibraries(ROOT, work, common), await stageCli(ROOT, work, common, headCommit())]
    return staged.map((dir) => npmPack(dir, out))
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(ROOT, 'dist') } } })
  try {
    for (const tarball of await pack(resolve(values.out))) console.log(tarball)
  } catch (err) {
    console.error(err.message)
    process.exit(1)
  }
}
