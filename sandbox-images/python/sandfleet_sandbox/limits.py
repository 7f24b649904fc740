"""What a job or a cell may use, by default and as set: memory, time, file size, open files, processes."""
import os

from .sandbox_env import SANDBOX_ENV

# The contract's defaults (LIMITS in packages/protocol/src/exec.ts), for a frame that lacks the field: the runner sends
# every job's and every cell's own (a session's memory_mb is its own default, SESSION_LIMITS).
DEFAULT_MEMORY_MB = 1024
DEFAULT_TIMEOUT_MS = 10000
FSIZE = int(os.environ.get(SANDBOX_ENV['max_file_mb'], '64')) << 20
NPROC = int(
    os.environ.get(SANDBOX_ENV['max_procs'], '0')
)  # RLIMIT_NPROC of a job; only meaningful in a user namespace of its own
NOFILE = 1024
PAGE = os.sysconf('SC_PAGE_SIZE')
# The soft stop: at its deadline a job's (or a cell's) process group gets SIGTERM, and this long to end, then SIGKILL. A
# handler of its own runs (it may print, clean up and exit); what it wrote comes back, with status timeout. The runner's
# drivers set it from GRACES.softStopMs.
SOFT_STOP_S = float(os.environ.get(SANDBOX_ENV['soft_stop_ms'], '500')) / 1000


def address_space(pages, frame):
    """RLIMIT_AS for a process now `pages` pages large that may allocate the frame's `memory_mb` beyond that."""
    return pages * PAGE + int(frame.get('memory_mb') or DEFAULT_MEMORY_MB) * 1048576


def timeout_ms_of(frame):
    """The frame's `timeout_ms`, or the default."""
    return int(frame.get('timeout_ms') or DEFAULT_TIMEOUT_MS)
