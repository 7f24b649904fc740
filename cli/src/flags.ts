/**
 * Flags of the gateway's settings: `--max-in-flight 512` or `--max-in-flight=512` →
 * `{ maxInFlight: '512' }`, for `loadGatewayConfig({ values })`, which types, checks and
 * reports them (with the `SANDFLEET_*` variables) in one message.
 */
export function gatewayValues (argv: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {}
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(argv[i])
    if (m === null) throw new Error(`unexpected argument ${argv[i]}`)
    const key = m[1].replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
    const value = m[2] ?? argv[++i]
    if (value === undefined) throw new Error(`--${m[1]}: needs a value`)
    values[key] = value
  }
  return values
}
