"""What an earlier job could have changed in the sandbox's other processes, read from outside them.

Every process of a sandbox has one uid: a job can signal, renice or prlimit the zygotes, the spare
job processes and the controller. The rlimits and scheduling each should have, taken at start-up
before any job ran, catch that.
"""
import itertools
import os
import resource

from .limits import FSIZE, NOFILE, NPROC, JOB_PRIORITY

RLIMITS = tuple(getattr(resource, n) for n in dir(resource) if n.startswith('RLIMIT_'))


def threads(stat_fd):
    """The threads of the process whose /proc/PID/stat is open as `stat_fd` (a job's reuse process from inside, or from
    the controller)."""
    return int(os.pread(stat_fd, 1024, 0).rsplit(b')', 1)[1].split()[17])


def scheduling(pid=0):
    """A process's nice value, scheduling policy and CPU affinity: what a job could change in another process."""
    return os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid), os.sched_getaffinity(pid)


START = (tuple(map(resource.getrlimit, RLIMITS)), scheduling())
# A job process's scheduling: the sandbox's start, nicer (limits.JOB_NICE; its zygote sets it as it forks one).
SPARE_SCHEDULING = (JOB_PRIORITY, *START[1][1:])
# A spare job process as its zygote forked it: the sandbox's start, with the limits every zygote sets on itself.
SPARE_LIMITS = tuple(
    {resource.RLIMIT_NOFILE: (NOFILE, NOFILE), resource.RLIMIT_FSIZE: (FSIZE, FSIZE)}.get(r, lim)
    for r, lim in zip(RLIMITS, START[0])
)


# The limits the controller sets on a job process for each job: a reuse process holds the last job's, so only their hard
# limit is compared, with what a spare has or the controller set.
PER_JOB_RLIMITS = (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NPROC)


def tampered(pid, reused=False, expected=SPARE_SCHEDULING):
    """True when the rlimits of spare job process `pid` are not SPARE_LIMITS or its scheduling is not `expected` (a
    zygote's: START's): an earlier job changed them. Read from outside (prlimit), so the process itself runs nothing for
    it. A reuse process (`reused`) may hold the soft limits of its last job, and the processes' limit the controller
    set."""
    if scheduling(pid) != expected:
        return True
    now = tuple(map(resource.prlimit, itertools.repeat(pid, len(RLIMITS)), RLIMITS))
    if not reused:
        return now != SPARE_LIMITS
    return any(
        n[1] not in (e[1], per_job_hard(r)) if r in PER_JOB_RLIMITS else n != e
        for r, n, e in zip(RLIMITS, now, SPARE_LIMITS)
    )


def per_job_hard(r):
    """The hard limit the controller sets for each job on resource `r`, where it sets one (else None)."""
    return NPROC if r == resource.RLIMIT_NPROC and NPROC else None


def signalled(pid):
    """True when a signal is pending for spare job process `pid` (its own or its process's set), or it is gone."""
    try:
        fd = os.open('/proc/%d/status' % pid, os.O_RDONLY)
        try:
            status = os.read(fd, 4096)
        finally:
            os.close(fd)
    except OSError:
        return True
    for key in (b'\nSigPnd:', b'\nShdPnd:'):
        at = status.find(key)
        if at < 0 or int(status[at + len(key) : status.index(b'\n', at + 1)], 16):
            return True
    return False


def zygote_tampered(z):
    """True when zygote `z` (a zygote_handle.Zygote) is gone (killed, a zombie not reaped yet: its size reads 0), or,
    once it is warm, a job changed its limits or scheduling: every job process it forks would inherit them. Its limits
    are then a spare's (a spare gets its job's own from the controller)."""
    try:
        return int(os.pread(z.statm, 64, 0).split()[0]) == 0 or (z.warm and tampered(z.pid, expected=START[1]))
    except (OSError, ValueError, IndexError):
        return True


# What a job could lower in the controller to break it (a job runs nothing else in it: the other limits do not matter).
CONTROLLER_RLIMITS = (
    resource.RLIMIT_AS,
    resource.RLIMIT_CPU,
    resource.RLIMIT_DATA,
    resource.RLIMIT_NOFILE,
    resource.RLIMIT_STACK,
)
CONTROLLER_START = tuple(map(resource.getrlimit, CONTROLLER_RLIMITS))


def controller_tampered():
    """True when a job changed the controller's own limits or scheduling (its sandbox is then retired)."""
    return scheduling() != START[1] or tuple(map(resource.getrlimit, CONTROLLER_RLIMITS)) != CONTROLLER_START
