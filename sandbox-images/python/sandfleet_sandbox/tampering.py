"""What an earlier job could have changed in the sandbox's other processes, read from outside them.

Every process of a sandbox has one uid: a job can signal, renice or prlimit the zygotes, the spare
job processes and the controller. The rlimits and scheduling each should have, taken at start-up
before any job ran, catch that.
"""
import itertools, os, resource

from .limits import FSIZE, NOFILE

RLIMITS = tuple(getattr(resource, n) for n in dir(resource) if n.startswith('RLIMIT_'))


def scheduling(pid=0):
    """A process's nice value, scheduling policy and CPU affinity: what a job could change in another process."""
    return os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid), os.sched_getaffinity(pid)


START = (tuple(map(resource.getrlimit, RLIMITS)), scheduling())
# A spare job process as its zygote forked it: the sandbox's start, with the limits every zygote sets on itself.
SPARE_LIMITS = tuple({resource.RLIMIT_NOFILE: (NOFILE, NOFILE), resource.RLIMIT_FSIZE: (FSIZE, FSIZE)}.get(r, lim)
                     for r, lim in zip(RLIMITS, START[0]))


def tampered(pid):
    """True when the rlimits of spare job process `pid` are not SPARE_LIMITS or its scheduling is not START's: an
    earlier job changed them. Read from outside (prlimit), so the process itself runs nothing for it."""
    return scheduling(pid) != START[1] or tuple(map(resource.prlimit, itertools.repeat(pid, len(RLIMITS)), RLIMITS)) != SPARE_LIMITS


def signalled(pid):
    """True when a signal is pending for spare job process `pid` (its own or its process's set), or it is gone."""
    try:
        fd = os.open('/proc/%d/status' % pid, os.O_RDONLY)
        try: status = os.read(fd, 4096)
        finally: os.close(fd)
    except OSError: return True
    return any(line.startswith((b'SigPnd:', b'ShdPnd:')) and int(line.split()[1], 16) for line in status.splitlines())


# What a job could lower in the controller to break it (a job runs nothing else in it: the other limits do not matter).
CONTROLLER_RLIMITS = (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_DATA, resource.RLIMIT_NOFILE, resource.RLIMIT_STACK)
CONTROLLER_START = tuple(map(resource.getrlimit, CONTROLLER_RLIMITS))


def controller_tampered():
    """True when a job changed the controller's own limits or scheduling (its sandbox is then retired)."""
    return scheduling() != START[1] or tuple(map(resource.getrlimit, CONTROLLER_RLIMITS)) != CONTROLLER_START
