"""What a job or a cell may use: memory, CPU time, file size, open files, processes. (Their per-job values come in the
job's frame, as the runner resolved them: frames.py.)"""
import os

from .sandbox_env import SANDBOX_ENV

FSIZE = int(os.environ.get(SANDBOX_ENV['max_file_mb'], '64')) << 20
# RLIMIT_NPROC of a job; only meaningful in a user namespace of its own
NPROC = int(os.environ.get(SANDBOX_ENV['max_procs'], '0'))
NOFILE = 1024
PAGE = os.sysconf('SC_PAGE_SIZE')
# The soft stop: at its deadline a job's (or a cell's) process group gets SIGTERM, and this long to end, then SIGKILL. A
# handler of its own runs (it may print, clean up and exit); what it wrote comes back, with status timeout. The runner's
# drivers set it from GRACES.softStopMs.
SOFT_STOP_S = float(os.environ.get(SANDBOX_ENV['soft_stop_ms'], '500')) / 1000
# A job process runs this much nicer than its sandbox's controller and zygotes (its zygote sets it as it forks one): a
# job that keeps its sandbox's CPU quota busy (a fork bomb) still leaves the controller the time to stop it at its
# deadline and answer. The kernel holds it: a lower nice value takes CAP_SYS_NICE or an RLIMIT_NICE, and a job has
# neither; a higher one the tamper checks see.
JOB_NICE = 10
JOB_PRIORITY = min(19, os.getpriority(os.PRIO_PROCESS, 0) + JOB_NICE)


def address_space(pages, memory_mb):
    """RLIMIT_AS for a process now `pages` pages large that may allocate `memory_mb` beyond that."""
    return pages * PAGE + memory_mb * 1048576


def cpu_backstop_s(timeout_ms):
    """RLIMIT_CPU's soft limit for a job of `timeout_ms`, in seconds past what its process used before it: a backstop
    past the controller's own stop at the deadline."""
    return timeout_ms // 1000 + 2
