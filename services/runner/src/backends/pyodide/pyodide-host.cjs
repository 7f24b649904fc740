// The pyodide host process's entry (pyodide-host.ts spawns it with the host's Node flags):
// registers tsx's require hook (TypeScript, no build step), then runs pyodide-host-main.ts.
// CommonJS on purpose: tsx's ESM hooks run in a loader thread that costs ~300 ms to start on
// this machine; its require hook runs in this thread and loads the same modules.
require('tsx/cjs/api').register()
require('./pyodide-host-main.ts')
