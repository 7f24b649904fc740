/**
 * Prometheus helpers the sandfleet services share, on prom-client.
 *
 * @example
 * ```ts
 * import { Counter, Histogram, Registry } from 'prom-client'
 * import { counterChild, histogramChild } from '@sandfleet/metrics'
 * const registers = [new Registry()]
 * const jobs = new Counter({ name: 'jobs_total', help: 'Jobs', labelNames: ['status'], registers })
 * const seconds = new Histogram({ name: 'job_seconds', help: 'Run time', labelNames: ['language'], registers })
 * const ok = counterChild(jobs, { status: 'ok' })       // bound once, at start-up
 * const python = histogramChild(seconds, { language: 'python' })
 * ok.inc()                                               // on the hot path: no label work
 * python.observe(0.0012)
 * ```
 */
export * from './children.ts'
export * from './process.ts'
