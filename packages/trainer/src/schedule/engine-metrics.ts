/**
 * KV cache figures from an engine's Prometheus `/metrics`: vLLM's `vllm:cache_config_info`
 * (`num_gpu_blocks` × `block_size`) and `vllm:kv_cache_usage_perc` (`vllm:gpu_cache_usage_perc`
 * before v1), SGLang's `sglang:max_total_num_tokens` and `sglang:token_usage`.
 */

/** KV figures of one engine; a field is undefined when the metrics do not say. */
export interface KvMetrics {
  /** KV cache capacity, tokens. */
  capacityTokens?: number
  /** Fraction of the KV cache in use, 0..1. */
  usage?: number
  /** Requests running and waiting. */
  running?: number
  waiting?: number
}

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** The samples of a Prometheus text exposition (comments skipped). */
export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    const t = line.trim()
    if (t === '' || t.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(t)
    if (m === null) continue
    const labels: Record<string, string> = {}
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2]
    out.push({ name: m[1], labels, value: Number(m[4]) })
  }
  return out
}

/** KV capacity and usage read from vLLM's or SGLang's metrics (summed over label sets). */
export function readKvMetrics(text: string): KvMetrics {
  const samples = parsePrometheus(text)
  const first = (...names: string[]): number | undefined => {
    for (const n of names) {
      const s = samples.filter((x) => x.name === n && Number.isFinite(x.value))
      if (s.length > 0)
        return s.reduce((a, x) => a + x.value, 0) / (n.endsWith('perc') || n.endsWith('usage') ? s.length : 1)
    }
    return undefined
  }
  const out: KvMetrics = {}
  const info = samples.find((s) => s.name === 'vllm:cache_config_info' && s.labels.num_gpu_blocks !== undefined)
  if (info) {
    const blocks = Number(info.labels.num_gpu_blocks)
    const size = Number(info.labels.block_size ?? 16)
    if (Number.isFinite(blocks) && Number.isFinite(size)) out.capacityTokens = blocks * size
  }
  out.capacityTokens ??= first('sglang:max_total_num_tokens')
  const usage = first('vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage')
  if (usage !== undefined) out.usage = usage
  const running = first('vllm:num_requests_running', 'sglang:num_running_reqs')
  if (running !== undefined) out.running = running
  const waiting = first('vllm:num_requests_waiting', 'sglang:num_queue_reqs')
  if (waiting !== undefined) out.waiting = waiting
  if (out.capacityTokens === undefined) delete out.capacityTokens
  return out
}
