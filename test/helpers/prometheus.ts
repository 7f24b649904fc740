/**
 * Reads the Prometheus text exposition for tests: every sample with its labels, and lookups that
 * fail when a series is missing (a missing series never reads as 0).
 */
import assert from 'node:assert/strict'

/** One sample line: `name{labels} value`. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g

/** Every sample of `text` (comments and blank lines skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const brace = line.indexOf('{')
    const space = line.lastIndexOf(' ')
    const name = brace === -1 ? line.slice(0, line.indexOf(' ')) : line.slice(0, brace)
    const labels: Record<string, string> = {}
    if (brace !== -1) {
      for (const m of line.slice(brace + 1, line.lastIndexOf('}')).matchAll(LABEL))
        labels[m[1]] = m[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    }
    samples.push({ name, labels, value: Number(line.slice(space + 1)) })
  }
  return samples
}

/** Names of the metric families `text` declares (its `# TYPE` lines). */
export function familyNames(text: string): Set<string> {
  const names = new Set<string>()
  for (const m of text.matchAll(/^# TYPE (\S+) \S+$/gm)) names.add(m[1])
  return names
}

/** The samples named `name` whose labels include every pair of `labels`. */
export function find(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
}

/** The one sample named `name` with `labels`; fails the test when there is none or more than one. */
export function one(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample {
  const found = find(samples, name, labels)
  assert.equal(found.length, 1, `expected one ${name}${JSON.stringify(labels)}, found ${found.length}`)
  return found[0]
}
