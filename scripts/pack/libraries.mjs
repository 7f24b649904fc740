// The published libraries (@sandfleet/protocol, command-line, client, trainer) as Node packages: tsc compiles
// their sources to JavaScript with declarations (relative `.ts` imports rewritten to `.js`), and
// each is staged as a folder whose package.json points its exports at dist/ instead of src/.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'

/** The workspaces published as libraries, in dependency order. */
export const LIBRARIES = Object.freeze([
  'packages/protocol',
  'packages/command-line',
  'packages/client',
  'packages/trainer'
])

/** Files and folders of a library's workspace shipped beside dist/ and package.json, when present. */
const EXTRAS = ['README.md', 'python']

/** An export target in the sources (`./src/x/index.ts`) and its built files in dist/. */
function builtTarget(source) {
  const m = /^\.\/src\/(.+)\.ts$/.exec(source)
  if (m === null) throw new Error(`pack: export target ${source} is not a ./src/….ts file`)
  return { types: `./dist/${m[1]}.d.ts`, default: `./dist/${m[1]}.js` }
}

/** The manifest of the staged package: the workspace's, its exports pointing at dist/; `extras` are shipped too. */
export function stagedLibraryManifest(manifest, common, extras) {
  const exports = typeof manifest.exports === 'string' ? { '.': manifest.exports } : manifest.exports
  const { scripts, devDependencies, ...kept } = manifest
  const built = Object.fromEntries(Object.entries(exports).map(([key, source]) => [key, builtTarget(source)]))
  return {
    ...kept,
    ...common,
    // For tools that read no `exports` (TypeScript's older `node10` resolution).
    main: built['.'].default,
    types: built['.'].types,
    exports: built,
    files: ['dist', ...extras.filter((e) => e !== 'README.md')]
  }
}

/**
 * Compiles LIBRARIES once with tsc into `work/build`, then stages each in `work/NAME/` (dist/,
 * package.json, README and extras). Returns the staged folders.
 */
export function stageLibraries(root, work, common) {
  const build = join(work, 'build')
  rmSync(build, { recursive: true, force: true })
  const tsconfig = join(work, 'tsconfig.json')
  writeFileSync(
    tsconfig,
    JSON.stringify(
      {
        extends: relative(work, join(root, 'tsconfig.json')),
        compilerOptions: {
          noEmit: false,
          declaration: true,
          rewriteRelativeImportExtensions: true,
          rootDir: relative(work, join(root, 'packages')),
          outDir: 'build',
          // Node's own types come from the repository's node_modules.
          typeRoots: [relative(work, join(root, 'node_modules/@types'))]
        },
        include: LIBRARIES.map((dir) => relative(work, join(root, dir, 'src')))
      },
      null,
      2
    )
  )
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc')
  const run = spawnSync(process.execPath, [tsc, '-p', tsconfig], { cwd: root, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`pack: tsc failed\n${run.stdout}${run.stderr}`)
  const staged = []
  for (const dir of LIBRARIES) {
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'))
    const stage = join(work, dir.split('/').pop())
    rmSync(stage, { recursive: true, force: true })
    mkdirSync(stage, { recursive: true })
    cpSync(join(build, relative(join(root, 'packages'), join(root, dir)), 'src'), join(stage, 'dist'), {
      recursive: true
    })
    const extras = EXTRAS.filter((extra) => existsSync(join(root, dir, extra)))
    for (const extra of extras)
      cpSync(join(root, dir, extra), join(stage, extra), { recursive: true, filter: (p) => !p.includes('__pycache__') })
    writeFileSync(
      join(stage, 'package.json'),
      JSON.stringify(stagedLibraryManifest(manifest, common, extras), null, 2) + '\n'
    )
    staged.push(stage)
  }
  return staged
}
