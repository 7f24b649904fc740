import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { judgeLanguageRow } from '@sandfleet/protocol'

const image = (file: string): string =>
  readFileSync(new URL(`../../../../sandbox-images/python/${file}`, import.meta.url), 'utf8')

test("the image precompiles bits/stdc++.h with exactly the judge's C++ flags, in both builds", () => {
  const cpp = judgeLanguageRow('cpp')
  assert.equal(cpp?.precompiledHeader, 'bits/stdc++.h')
  const script = image('precompile-headers.sh')
  const flags = /^flags=\(([^)]*)\)$/m.exec(script)?.[1].split(/\s+/)
  assert.deepEqual(flags, cpp?.compile?.flags, 'precompile-headers.sh flags= is the cpp row of judge-languages.ts')
  assert.match(script, /-x c\+\+-header/)
  assert.match(image('build-rootfs.sh'), /precompile-headers\.sh" "\$dir"/, 'the debootstrap root runs it')
  assert.match(image('Dockerfile'), /precompile-headers\.sh \//, 'the Dockerfile runs it')
  assert.match(readFileSync(new URL('../../../../.ci/run', import.meta.url), 'utf8'), /precompile-headers\.sh \//)
})

test("both builds install every compiled row's compiler", () => {
  const compilers = ['cpp', 'c'].map((l) => judgeLanguageRow(l)?.compile?.compiler)
  const rootfs = /compilers="\$\{SANDFLEET_COMPILER_PACKAGES:-([^}]*)\}"/.exec(image('build-rootfs.sh'))?.[1].split(' ')
  const docker = /apt-get install -y --no-install-recommends ([^\\\n]*)/.exec(image('Dockerfile'))?.[1].split(' ')
  for (const cc of compilers) {
    assert.ok(rootfs?.includes(cc as string), `build-rootfs.sh installs ${cc}`)
    assert.ok(docker?.includes(cc as string), `the Dockerfile installs ${cc}`)
  }
})
