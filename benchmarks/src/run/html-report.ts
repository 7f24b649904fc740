/**
 * The report as one self-contained HTML file: the figures, a latency histogram, and throughput
 * and calls in flight over time, drawn as inline SVG (no script, no stylesheet or font fetched:
 * it opens with no network). The charts are drawn in a W × H box and scale to the page's width.
 */
import { formatNumber } from '../report.ts'
import { describeSetup, markdownReport, type ProductReport } from './run-report.ts'

const W = 960
const H = 300
const PAD = { left: 56, right: 12, top: 12, bottom: 34 }
/** The histogram's band above its bars, where the percentiles' labels go (a row each), off the bars. */
const MARK_BAND = 28
/** Width of a character of a 10 px label, at most (DejaVu Sans, the widest fallback of system-ui here). */
const CHAR_W = 6.5
/** Drawn under a label: a white outline that keeps it legible over a line or a bar. */
const HALO = 'stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"'

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** A line chart of `series` (x, y) with axes labelled; `id` names the SVG for tests and links. */
function lineChart(
  id: string,
  title: string,
  xLabel: string,
  yLabel: string,
  series: Array<{ name: string; color: string; points: Array<[number, number]> }>
): string {
  const xs = series.flatMap((s) => s.points.map((p) => p[0]))
  const ys = series.flatMap((s) => s.points.map((p) => p[1]))
  const xMax = Math.max(1e-9, ...xs)
  const yMax = Math.max(1, ...ys) * 1.05
  const px = (x: number): number => PAD.left + (x / xMax) * (W - PAD.left - PAD.right)
  const py = (y: number): number => H - PAD.bottom - (y / yMax) * (H - PAD.top - PAD.bottom)
  const ticks = [0, 0.25, 0.5, 0.75, 1]
  const grid = ticks
    .map(
      (f) =>
        `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${py(f * yMax).toFixed(1)}" y2="${py(f * yMax).toFixed(1)}" stroke="#ddd"/><text x="${PAD.left - 4}" y="${(py(f * yMax) + 4).toFixed(1)}" text-anchor="end" font-size="10">${formatNumber(f * yMax)}</text>`
    )
    .join('')
  const xTicks = ticks
    .map(
      (f) =>
        `<text x="${px(f * xMax).toFixed(1)}" y="${H - PAD.bottom + 14}" text-anchor="${f === 1 ? 'end' : 'middle'}" font-size="10">${formatNumber(f * xMax)}</text>`
    )
    .join('')
  const lines = series
    .map(
      (s) =>
        `<polyline class="series" data-name="${esc(s.name)}" fill="none" stroke="${s.color}" stroke-width="1.5" points="${s.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`
    )
    .join('')
  const legend = series
    .map(
      (s, i) =>
        `<text x="${PAD.left + 8 + i * 150}" y="${PAD.top + 10}" font-size="11" fill="${s.color}">${esc(s.name)}</text>`
    )
    .join('')
  return (
    `<figure><figcaption>${esc(title)}</figcaption><svg id="${id}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">` +
    `${grid}${xTicks}<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#333"/>` +
    `<text x="${(W + PAD.left) / 2}" y="${H - 4}" text-anchor="middle" font-size="11">${esc(xLabel)}</text>` +
    `<text x="12" y="${H / 2}" text-anchor="middle" font-size="11" transform="rotate(-90 12 ${H / 2})">${esc(yLabel)}</text>${lines}${legend}</svg></figure>`
  )
}

/** Bars of the latency histogram (log-spaced buckets), with p50 and p99 marked. */
function histogramChart(r: ProductReport): string {
  const { edgesMs, counts } = r.histogram
  if (counts.length === 0) return '<p>No latencies.</p>'
  const top = Math.max(1, ...counts)
  const barsTop = PAD.top + MARK_BAND
  const bw = (W - PAD.left - PAD.right) / counts.length
  const lo = Math.log(edgesMs[0])
  const span = Math.log(edgesMs[edgesMs.length - 1]) - lo || 1
  const xOf = (ms: number): number =>
    PAD.left + ((Math.log(Math.max(ms, edgesMs[0])) - lo) / span) * (W - PAD.left - PAD.right)
  const bars = counts
    .map((c, i) => {
      const h = (c / top) * (H - barsTop - PAD.bottom)
      return `<rect class="bar" x="${(PAD.left + i * bw).toFixed(1)}" y="${(H - PAD.bottom - h).toFixed(1)}" width="${Math.max(1, bw - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="#4c78a8"><title>${formatNumber(edgesMs[i])}–${formatNumber(edgesMs[i + 1])} ms: ${c}</title></rect>`
    })
    .join('')
  const last = edgesMs.length - 1
  const labels = [0, 10, 20, 30, 40]
    .filter((i) => i < edgesMs.length)
    .map(
      (i) =>
        `<text x="${(PAD.left + i * bw).toFixed(1)}" y="${H - PAD.bottom + 14}" text-anchor="${i === last ? 'end' : 'middle'}" font-size="10">${formatNumber(edgesMs[i])}</text>`
    )
    .join('')
  // The labels in the band above the bars, p99's a row below p50's (two close marks do not write over each other):
  // each right of its mark, or left of it where its text would cross the chart's right edge.
  const marks = (['p50', 'p99'] as const)
    .map((p, row) => {
      const x = xOf(r.latencyMs[p])
      const text = `${p} ${formatNumber(r.latencyMs[p])} ms`
      const left = x + 3 + text.length * CHAR_W > W - PAD.right
      const label = `<text class="mark" x="${(left ? x - 3 : x + 3).toFixed(1)}" y="${PAD.top + 10 + 12 * row}" font-size="10" fill="#e45756" ${HALO}${left ? ' text-anchor="end"' : ''}>${text}</text>`
      return `<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${PAD.top + 12 * row}" y2="${H - PAD.bottom}" stroke="#e45756" stroke-dasharray="4 2"/>${label}`
    })
    .join('')
  return (
    `<figure><figcaption>Latency histogram (calls per bucket, log-spaced ms)</figcaption><svg id="latency-histogram" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="latency histogram">` +
    `${bars}${marks}${labels}<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#333"/>` +
    `<text x="${(W + PAD.left) / 2}" y="${H - 4}" text-anchor="middle" font-size="11">latency, ms</text></svg></figure>`
  )
}

/** The throughput series: calls answered per second between consecutive samples. */
function throughput(r: ProductReport): Array<[number, number]> {
  const out: Array<[number, number]> = []
  for (let i = 1; i < r.samples.length; i++) {
    const a = r.samples[i - 1]
    const b = r.samples[i]
    const dt = b.tS - a.tS
    if (dt > 0) out.push([b.tS, (b.done - a.done) / dt])
  }
  return out
}

/** Markdown's table rows as HTML (the same figures as the Markdown report). */
function figuresTable(r: ProductReport): string {
  const rows = markdownReport(r)
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| figure') && !l.startsWith('| ---'))
  return (
    '<table id="figures"><tbody>' +
    rows
      .map((l) => {
        const [k, v] = l.slice(2, -2).split(' | ')
        return `<tr><th>${esc(k.replace(/`/g, ''))}</th><td>${esc(v.replace(/`/g, ''))}</td></tr>`
      })
      .join('') +
    '</tbody></table>'
  )
}

/** The whole page. */
export function htmlReport(r: ProductReport): string {
  const e = r.environment
  const failed = r.thresholds.filter((t) => !t.passed)
  const verdict =
    r.thresholds.length === 0
      ? ''
      : `<p id="verdict" class="${failed.length === 0 ? 'pass' : 'fail'}">${failed.length === 0 ? 'Every threshold passed.' : `Failed: ${esc(failed.map((t) => t.text).join(', '))}`}</p>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandfleet bench: ${esc(describeSetup(r.setup))}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:${W + 240}px}svg{display:block;width:100%;height:auto}th{text-align:left;font-weight:normal;color:#555;padding-right:16px}td{font-variant-numeric:tabular-nums}figure{margin:16px 0}figcaption{font-weight:600;margin-bottom:4px}.pass{color:#1a7f37}.fail{color:#c62828;font-weight:600}code{font-size:12px}</style>
</head><body>
<h1>sandfleet bench</h1>
<p id="setup">${esc(describeSetup(r.setup))}</p>
${verdict}
${figuresTable(r)}
${histogramChart(r)}
${lineChart('throughput-over-time', 'Throughput over time (answered calls/s)', 'seconds', 'calls/s', [{ name: 'answered calls/s', color: '#4c78a8', points: throughput(r) }])}
${lineChart('in-flight-over-time', 'Calls in flight over time', 'seconds', 'calls', [
  { name: 'sent, not answered', color: '#f58518', points: r.samples.map((s) => [s.tS, s.outstanding]) },
  { name: 'requests on a connection', color: '#54a24b', points: r.samples.map((s) => [s.tS, s.onWire]) }
])}
<p><code>${esc(e.command)}</code><br>${esc(e.date)}, commit ${esc(e.commit)}; ${e.machine.cores} cores (${esc(e.machine.cpu)}), ${e.machine.memoryGiB} GiB, load average ${e.machine.loadAverage1m} at start, CPU ${e.machine.backgroundBusyPct ?? '?'} % busy before the run (a shared machine shows here); fleet: ${esc(r.setup.fleet)}</p>
</body></html>
`
}
