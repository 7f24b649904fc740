#!/usr/bin/env node
// The lint and format checks of `npm test` (and `npm run lint`): Prettier and ESLint over the
// TypeScript and JavaScript, Black and flake8 over the Python. `--fix` (`npm run format`) writes
// what Prettier, ESLint and Black would change instead of failing on it.
// The files generated from sources (.gitattributes: linguist-generated) are left out.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { spawnSync } from 'node:child_process'

const root = new URL('..', import.meta.url).pathname
const fix = process.argv.includes('--fix')
/** Black's settings, given here because each Python package's own pyproject.toml would otherwise win. */
const BLACK = ['--line-length', '120', '--skip-string-normalization', '--quiet']

const generated = readFileSync(join(root, '.gitattributes'), 'utf8')
  .split('\n')
  .filter((line) => /\blinguist-generated\b/.test(line))
  .map((line) => line.split(/\s+/)[0])

function pythonFiles(dir = root, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.') || name === '__pycache__') continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) pythonFiles(path, out)
    else if (name.endsWith('.py') && !generated.includes(relative(root, path))) out.push(relative(root, path))
  }
  return out
}

/** Runs one tool; a tool that is not installed fails with how to install it. */
function run(command, args, install) {
  const { status, error } = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (error?.code === 'ENOENT') {
    console.error(`lint: ${command} is not installed (${install})`)
    return false
  }
  if (status !== 0) console.error(`lint: ${command} ${fix ? 'could not fix everything' : 'failed'}`)
  return status === 0
}

const bin = (name) => join(root, 'node_modules', '.bin', name)
const python = pythonFiles()
const debian = 'apt-get install -y black flake8; .ci/run installs them'
const results = [
  run(bin('prettier'), [fix ? '--write' : '--check', '--log-level', 'warn', '.'], 'npm install'),
  run(bin('eslint'), fix ? ['--fix', '.'] : ['.'], 'npm install'),
  run('black', [...BLACK, ...(fix ? [] : ['--check']), ...python], debian),
  run('flake8', python, debian)
]
if (results.includes(false)) process.exit(1)
console.log(`lint: ${fix ? 'formatted' : 'clean'} (Prettier, ESLint; Black, flake8 over ${python.length} Python files)`)
