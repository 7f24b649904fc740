/**
 * The HTML report at the widths a laptop's browser has (1280, 1366, 1440, 1920 px), rendered in
 * headless Chromium: no text of a chart crosses its edge (a label cut off), and the percentiles'
 * labels sit off the bars. Measured by Chromium itself (each text's and bar's box in the chart's
 * units, by a script added to a copy of the page: the report has none), on the worst case: p99 at
 * the last bucket with the widest figures, p50 close beside it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Environment } from '../../src/environment.ts'
import type { RunResult } from '../../src/run/engine.ts'
import { htmlReport } from '../../src/run/html-report.ts'
import { buildReport } from '../../src/run/run-report.ts'
import { colourBounds, decodePng } from './png.ts'

const CHROMIUM = '/usr/bin/chromium'
const LAPTOP_WIDTHS = [1280, 1366, 1440, 1920]

const ENVIRONMENT: Environment = {
  date: '2026-12-07T00:00:00Z',
  commit: 'test',
  command: 'sandfleet bench step --calls 400',
  machine: {
    cores: 2,
    cpu: 'test',
    memoryGiB: 8,
    kernel: 'test',
    node: process.version,
    loadAverage1m: 0,
    backgroundBusyPct: undefined,
    forkProbeUs: undefined
  }
}

/** A run of `latencies`, every call answered right. */
function run(latencies: number[]): RunResult {
  const n = latencies.length
  return {
    accounting: {
      calls: n,
      answered: n,
      right: n,
      wrong: 0,
      failed: 0,
      retriable: 0,
      lost: 0,
      duplicated: 0,
      misrouted: 0,
      statuses: { ok: n },
      wrongBy: {}
    },
    latencyMs: latencies,
    latencyByClass: new Map([['short', latencies]]),
    callCpuMs: 0,
    measuredCalls: 0,
    elapsedS: 130,
    requests: n,
    samples: Array.from({ length: 20 }, (_, i) => ({
      tS: i * 6.5,
      done: Math.round((n * i) / 19),
      right: Math.round((n * i) / 19),
      wrong: 0,
      failed: 0,
      outstanding: n - Math.round((n * i) / 19),
      onWire: 4
    }))
  }
}

/** Latencies from 100 ms to ~123 s, most of them near the top: p50 and p99 both in the last buckets. */
const WORST = Array.from({ length: 400 }, (_, i) => (i < 40 ? 100 * 1.19 ** i : 110_000 + 34 * (i - 40)))

/** The page at `width`: each chart's texts that cross its edges, and the percentile labels that lie on a bar. */
const MEASURE = `<script>
const out = []
for (const svg of document.querySelectorAll('svg')) {
  const [, , w, h] = svg.getAttribute('viewBox').split(' ').map(Number)
  // Boxes as drawn (a rotated axis title included), in the chart's units.
  const s = svg.getBoundingClientRect()
  const box = (e) => {
    const r = e.getBoundingClientRect()
    const k = w / s.width
    return { x: (r.left - s.left) * k, y: (r.top - s.top) * k, width: r.width * k, height: r.height * k }
  }
  const bars = [...svg.querySelectorAll('rect.bar')].map(box)
  for (const t of svg.querySelectorAll('text')) {
    const b = box(t)
    if (b.x < 0 || b.y < 0 || b.x + b.width > w || b.y + b.height > h)
      out.push(svg.id + ': "' + t.textContent + '" crosses the edge (' + [b.x, b.y, b.x + b.width, b.y + b.height].map(Math.round) + ' of ' + w + 'x' + h + ')')
    if (t.classList.contains('mark'))
      for (const r of bars)
        if (r.height > 0 && b.x < r.x + r.width && r.x < b.x + b.width && b.y < r.y + r.height && r.y < b.y + b.height)
          out.push(svg.id + ': "' + t.textContent + '" lies on a bar')
  }
}
const pre = document.createElement('pre')
pre.id = 'measured'
pre.textContent = JSON.stringify(out)
document.body.append(pre)
</script>`

/** Chromium's `--dump-dom` (or a screenshot) of `file` in a window `width` px wide. */
async function chromium(file: string, width: number, profile: string, extra: string[]): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = spawn(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        `--user-data-dir=${profile}`,
        `--window-size=${width},1200`,
        ...extra,
        `file://${file}`
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] }
    )
    let text = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => (text += s))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      if (code === 0) resolve(text)
      else reject(new Error(`chromium exited ${String(code)}`))
    })
  })
}

test("the HTML report at laptop widths: no chart's text cut at its edge, the p50/p99 labels off the bars", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandfleet-html-report-'))
  try {
    const report = buildReport(
      ENVIRONMENT,
      {
        mode: 'step',
        target: 'single',
        path: '/v1/execute',
        workload: 'test',
        fleet: 'test',
        calls: 400,
        connections: 4
      },
      run(WORST),
      [],
      []
    )
    assert.ok(report.latencyMs.p99 > 100_000 && report.latencyMs.p50 > 100_000, 'both marks by the right edge')
    const page = htmlReport(report)
    const measured = join(dir, 'measured.html')
    writeFileSync(measured, page.replace('</body>', `${MEASURE}</body>`))
    const shown = join(dir, 'report.html')
    writeFileSync(shown, page)
    for (const width of LAPTOP_WIDTHS) {
      const dom = await chromium(measured, width, join(dir, `dom-${width}`), ['--dump-dom'])
      const found = /<pre id="measured">(.*?)<\/pre>/s.exec(dom)?.[1]
      assert.ok(found !== undefined, `${width} px: the page was measured`)
      assert.deepEqual(JSON.parse(found.replaceAll('&quot;', '"')), [], `${width} px`)
      // And as drawn: the labels' red ends inside the plot, whose bars end at its right edge.
      const shot = join(dir, `shot-${width}.png`)
      await chromium(shown, width, join(dir, `shot-${width}`), [`--screenshot=${shot}`])
      const pixels = decodePng(readFileSync(shot))
      const blue = colourBounds(pixels, '#4c78a8')
      const red = colourBounds(pixels, '#e45756')
      assert.ok(blue !== undefined && red !== undefined, `${width} px: the chart is drawn`)
      assert.ok(red.maxX <= blue.maxX + 2, `${width} px: the labels end at ${red.maxX} px, the plot at ${blue.maxX} px`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
