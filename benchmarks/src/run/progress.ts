/**
 * The live progress of a run on stderr: on a terminal, one line rewritten in place (done, in
 * flight, right, wrong, failed, rate); elsewhere (a CI log, a pipe, `--progress lines`) a line
 * every `everyS` seconds, each time another quarter of a known total is done, and the last state
 * at the end: a short step shows how it went, a long one leaves a few lines, not a flood.
 */
import type { Sample } from './engine.ts'

/** Where the progress goes, and how. */
export interface ProgressSink {
  write: (text: string) => void
  isTTY: boolean
}

/** A progress reporter: feed it samples, then `end()`. */
export function progressReporter(
  sink: ProgressSink,
  total: number | undefined,
  everyS = 10
): { sample: (s: Sample) => void; end: () => void } {
  let previous: Sample | undefined
  let lastLine = -Infinity
  let quarter = -1
  let last: Sample | undefined
  let open = false
  const line = (s: Sample): string => {
    const dt = previous === undefined ? 0 : s.tS - previous.tS
    const rate = dt > 0 && previous !== undefined ? (s.done - previous.done) / dt : 0
    const done =
      total === undefined
        ? `${s.done}`
        : `${s.done}/${total} (${total === 0 ? 100 : Math.floor((100 * s.done) / total)} %)`
    return `${s.tS.toFixed(1)} s  done ${done}  in flight ${s.outstanding}  right ${s.right}  wrong ${s.wrong}  failed ${s.failed}  ${Math.round(rate)} calls/s`
  }
  return {
    sample(s) {
      if (sink.isTTY) {
        sink.write(`\r\x1b[2K${line(s)}`)
        open = true
        previous = s
        return
      }
      last = s
      const reached = total === undefined || total === 0 ? quarter : Math.floor((4 * s.done) / total)
      if (s.tS - lastLine >= everyS || reached > quarter) {
        sink.write(line(s) + '\n')
        lastLine = s.tS
        quarter = Math.max(quarter, reached)
        previous = s
      }
    },
    end() {
      if (open) sink.write('\n')
      else if (last !== undefined && last.done !== previous?.done) sink.write(line(last) + '\n')
    }
  }
}
