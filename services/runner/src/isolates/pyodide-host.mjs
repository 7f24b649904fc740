// The pyodide host process's entry (pyodide-host.ts spawns it with the host's Node flags):
// registers tsx (TypeScript, no build step), then runs pyodide-host-main.ts.
const { register } = await import('tsx/esm/api')
register()
await import('./pyodide-host-main.ts')
