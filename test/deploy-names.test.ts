// The fleet image has one name: the chart's (image.repository, tagged with its appVersion, which is
// the repository's version), the one deploy/fleet-image.sh prints for build-fleet-image.sh and
// fleet.sh, Compose's default, and every build or load command the docs give.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')

const chart = parse(read('helm/sandfleet/Chart.yaml')) as { appVersion: string }
const values = parse(read('helm/sandfleet/values.yaml')) as { image: { repository: string; tag: string } }
const IMAGE = `${values.image.repository}:${values.image.tag === '' ? chart.appVersion : values.image.tag}`

test("the chart's image is the repository's version, and deploy/fleet-image.sh names it", () => {
  assert.equal(chart.appVersion, (JSON.parse(read('package.json')) as { version: string }).version)
  const env = { ...process.env }
  delete env.SANDFLEET_FLEET_IMAGE
  assert.equal(execFileSync('bash', [join(ROOT, 'deploy/fleet-image.sh')], { encoding: 'utf8', env }).trim(), IMAGE)
  for (const script of ['deploy/build-fleet-image.sh', 'deploy/fleet.sh'])
    assert.match(read(script), /^image="\$\(bash "\$root\/deploy\/fleet-image\.sh"\)"$/m, `${script} takes it`)
})

test('Compose and every command of the docs name the same image', () => {
  const compose = parse(read('deploy/compose.yaml')) as { services: Record<string, { image?: string }> }
  for (const [service, spec] of Object.entries(compose.services))
    if (spec.image !== undefined) assert.equal(spec.image, `\${SANDFLEET_FLEET_IMAGE:-${IMAGE}}`, service)
  const docs = [
    'README.md',
    'helm/sandfleet/README.md',
    ...readdirSync(join(ROOT, 'deploy')).map((f) => `deploy/${f}`),
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`)
  ]
  const named = new Map<string, string[]>()
  for (const doc of docs)
    // an image reference, not a path (/run/sandfleet/…) nor the VERSION placeholder of the scripts' comments
    for (const [image] of read(doc).matchAll(/(?<![/\w])sandfleet\/(?!python\b)[a-z0-9-]+:(?!VERSION\b)[\w.-]+/g))
      named.set(image, [...(named.get(image) ?? []), doc])
  assert.deepEqual([...named.keys()], [IMAGE], JSON.stringify(Object.fromEntries(named)))
})
