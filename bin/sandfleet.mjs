#!/usr/bin/env node
// The `sandfleet` CLI: registers tsx (TypeScript, no build step) and runs cli/src/main.ts.
import { register } from 'tsx/esm/api'
register()
await import('../cli/src/main.ts')
