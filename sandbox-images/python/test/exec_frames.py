"""`exec` frames as the runner writes them (every field, resolved), for the tests that drive the built programs."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The runner's defaults for a request that gives none (resolveExecRequest in packages/protocol, the runner's
# maxOutputBytes): what a test leaves out, it sends as the runner would.
RESOLVED = {
    'stdin': '',
    'timeout_ms': 10000,
    'memory_mb': 1024,
    'files': {},
    'fetch_files': [],
    'max_output_bytes': 65536,
    'isolation': 'fork',
    'wait_ms': None,
    'tenant': None,
}


def exec_frame(job_id, code, **fields):
    """An `exec` frame of every field: `fields` over RESOLVED."""
    return {'op': 'exec', 'id': job_id, 'code': code, **RESOLVED, **fields}


def exec_line(job_id, code, **fields):
    """exec_frame as the channel's line (bytes, newline-ended)."""
    return (json.dumps(exec_frame(job_id, code, **fields)) + '\n').encode()


def start_executor(workdir):
    """The built executor.py, its work dir `workdir`, over its pipes (stdin, stdout)."""
    env = {'PATH': '/usr/bin:/bin', 'SANDFLEET_WORKDIR': str(workdir)}
    return subprocess.Popen(
        [sys.executable, '-I', os.path.join(HERE, 'executor.py')],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
