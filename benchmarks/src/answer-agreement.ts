/**
 * How often the math answer checker agrees with the held-out labels of {@link HELD_OUT_PAIRS}
 * and {@link HELD_OUT_PAIRS_B}: overall, per batch and by kind, with every disagreement listed.
 *
 * Usage: node --import tsx benchmarks/src/answer-agreement.ts
 */
import { pathToFileURL } from 'node:url'
import { answersMatch, mathReward } from '@sandfleet/trainer'
import { gitCommit } from './environment.ts'
import { HELD_OUT_PAIRS, HELD_OUT_PAIRS_B, type AnswerPair } from './workloads/answer-pairs.ts'

/** What the checker says of one pair. */
export function judge(pair: AnswerPair): { equal: boolean; method: string } {
  if (pair.response === true) {
    const r = mathReward(pair.candidate, pair.reference)
    return { equal: r.reward === 1, method: r.method }
  }
  return answersMatch(pair.candidate, pair.reference)
}

/** Agreement over `pairs`: the share judged as labelled, and the pairs that were not. */
export function agreement(pairs: readonly AnswerPair[]): {
  agreed: number
  total: number
  misses: Array<{ pair: AnswerPair; method: string }>
} {
  const misses: Array<{ pair: AnswerPair; method: string }> = []
  for (const pair of pairs) {
    const got = judge(pair)
    if (got.equal !== pair.equal) misses.push({ pair, method: got.method })
  }
  return { agreed: pairs.length - misses.length, total: pairs.length, misses }
}

function main(): void {
  const pairs = [...HELD_OUT_PAIRS, ...HELD_OUT_PAIRS_B]
  const share = (r: { agreed: number; total: number }): string =>
    `${r.agreed}/${r.total} = ${((100 * r.agreed) / r.total).toFixed(1)}%`
  const all = agreement(pairs)
  console.log(
    `# answer checker agreement\n\n- date ${new Date().toISOString()}, commit ${gitCommit()}\n- command: node --import tsx benchmarks/src/answer-agreement.ts\n`
  )
  console.log(
    `agreement: ${share(all)} (batch A, written before the checker's changes: ${share(agreement(HELD_OUT_PAIRS))}; batch B, after: ${share(agreement(HELD_OUT_PAIRS_B))})\n`
  )
  console.log('| kind | agreed |\n| --- | --- |')
  for (const kind of [...new Set(pairs.map((x) => x.kind))])
    console.log(`| ${kind} | ${share(agreement(pairs.filter((x) => x.kind === kind)))} |`)
  if (all.misses.length > 0) {
    console.log('\ndisagreements:\n')
    for (const { pair, method } of all.misses)
      console.log(
        `- ${pair.kind}: \`${pair.candidate}\` vs \`${pair.reference}\`: labelled ${pair.equal} (${pair.why}), judged ${!pair.equal} by ${method}`
      )
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main()
