"""The environment the sandbox reads, every name once.

SANDBOX_ENV: what the runner hands the executor and the session host, keyed as SANDBOX_ENV in
services/runner/src/kits/executor/sandbox-env.ts keys it (snake_case here; python-package.test.ts holds the two tables
equal). SANDBOX_KNOBS: settings of the sandbox's own that no driver sets (tests, benchmarks, an operator's image).
"""

SANDBOX_ENV = {
    'work_dir': 'SANDFLEET_WORKDIR',
    'scratch': 'SANDFLEET_SCRATCH',
    'soft_stop_ms': 'SANDFLEET_SOFT_STOP_MS',
    'max_file_mb': 'SANDFLEET_MAX_FILE_MB',
    'max_procs': 'SANDFLEET_MAX_PROCS',
    'isolation': 'SANDFLEET_ISOLATION',
    'channel': 'SANDFLEET_CHANNEL',
    'seccomp': 'SANDFLEET_SECCOMP',
    'session_namespaces': 'SANDFLEET_SESSION_NAMESPACES',
}
SANDBOX_KNOBS = {
    'pipe_patience_ms': 'SANDFLEET_PIPE_PATIENCE_MS',
    'no_hugepages': 'SANDFLEET_NO_HUGEPAGES',
    'session_spare_idle_s': 'SANDFLEET_SESSION_SPARE_IDLE_S',
    'session_preload': 'SANDFLEET_SESSION_PRELOAD',
    'session_max_procs': 'SANDFLEET_SESSION_MAX_PROCS',
}
