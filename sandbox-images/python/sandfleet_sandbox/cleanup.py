"""After each job: the processes it left behind killed, its work dir removed, the scratch dirs and System V IPC
objects back to what the sandbox started with, the zygotes and the controller read from outside; the next job must see
none of it (`Leftovers`)."""
import ctypes
import os
import signal
import stat

from .libc import LIBC
from .tamper_checks import controller_tampered, zygote_tampered

# System V IPC objects outlive the job that made them (they belong to the sandbox's IPC namespace): file, remover.
SYSV_IPC = (
    ('/proc/sysvipc/shm', lambda i: LIBC.shmctl(i, 0, None)),
    ('/proc/sysvipc/msg', lambda i: LIBC.msgctl(i, 0, None)),
    ('/proc/sysvipc/sem', lambda i: LIBC.semctl(i, 0, 0)),
)  # IPC_RMID is 0


def remove_tree(path):
    """Removes the file, link or directory tree at `path`, also where a job took its own permissions away or nested
    directories far deeper than PATH_MAX or the recursion limit (iterative, walking with relative chdir; no job
    process is left to race it). False when something stays."""
    home = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
    ok = True
    try:
        os.chdir(os.path.dirname(path) or '/')
        names = [
            [os.path.basename(path)]
        ]  # names[i]: what is still to remove at depth i (the last one is being removed)
        while names:
            if not names[-1]:  # everything below was removed (or could not be): go up, remove this directory
                names.pop()
                if not names:
                    break
                os.chdir('..')
                try:
                    os.rmdir(names[-1].pop())
                except OSError:
                    ok = False
                continue
            n = names[-1][-1]
            try:
                st = os.lstat(n)
            except OSError:
                names[-1].pop()
                continue
            if not stat.S_ISDIR(st.st_mode):
                try:
                    os.unlink(n)
                except OSError:
                    ok = False
                names[-1].pop()
                continue
            try:
                os.chmod(n, 0o700)
                os.chdir(n)
                names.append(os.listdir('.'))
            except OSError:
                ok = False
                names[-1].pop()
    except OSError:
        ok = False
    finally:
        os.fchdir(home)
        os.close(home)
    return ok


IPC_INFO_BUF = ctypes.create_string_buffer(256)


def sysv_in_use():
    """How many shm segments, message queues and semaphore sets exist (SHM_INFO, MSG_INFO, SEM_INFO: three syscalls,
    cheaper than reading /proc/sysvipc after each job); None without libc."""
    if LIBC is None:
        return None
    b = IPC_INFO_BUF
    try:
        LIBC.shmctl(0, 14, b)
        shm = ctypes.c_int.from_buffer(b, 0).value  # struct shm_info: used_ids
        LIBC.msgctl(0, 12, b)
        msg = ctypes.c_int.from_buffer(b, 0).value  # struct msginfo: msgpool
        LIBC.semctl(0, 0, 19, b)
        sem = ctypes.c_int.from_buffer(b, 28).value  # struct seminfo: semusz
    except (AttributeError, OSError):
        return None
    return shm, msg, sem


def sysv_ids(path):
    """The ids listed in one /proc/sysvipc file (empty when it is not readable)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            text = os.read(fd, 1 << 20)
        finally:
            os.close(fd)
    except OSError:
        return set()
    return {int(f[1]) for f in (line.split() for line in text.splitlines()[1:]) if len(f) > 1}


class Cleanup:
    """The sandbox as it started (the scratch dirs' entries, their modes, the System V IPC objects) and a fresh work
    dir; `clean` puts them back after a job."""

    def __init__(self, workdir, scratch):
        self.workdir = workdir
        remove_tree(workdir)  # an earlier executor's, where the work dir outlives its sandbox
        os.mkdir(workdir, 0o700)  # the first job's (each job's is made fresh after the one before: see clean)
        self.scratch = {d: set(os.listdir(d)) for d in scratch if os.path.isdir(d)}
        # a job may chmod these (the sandbox's uid owns /tmp): set back after each job
        self.modes = {
            d: stat.S_IMODE(os.stat(d).st_mode) for d in {*self.scratch, os.path.dirname(workdir)} if os.path.isdir(d)
        }
        self.ipc = {path: sysv_ids(path) for path, _ in SYSV_IPC} if LIBC is not None else {}
        self.ipc_in_use = sysv_in_use()

    def clean(self, ipc=True):
        """Removes the job's working directory, whatever it left in the scratch dirs and (`ipc`: a job that could make
        them) its System V IPC objects. False when something could not be removed (the sandbox is then retired: the next
        job must not see it)."""
        ok = True
        for d, mode in self.modes.items():
            try:
                os.chmod(d, mode)
            except OSError:
                pass
        try:
            os.rmdir(self.workdir)
        except FileNotFoundError:
            pass
        except OSError:
            ok = remove_tree(self.workdir)
        for d, base in self.scratch.items():
            try:
                names = os.listdir(d)
            except OSError:
                ok = False
                continue
            for n in names:
                if n not in base:
                    ok = remove_tree(os.path.join(d, n)) and ok
        if ipc and (self.ipc_in_use is None or sysv_in_use() != self.ipc_in_use):
            for path, remove in SYSV_IPC:
                if path in self.ipc:
                    for i in sysv_ids(path) - self.ipc[path]:
                        remove(i)
        try:
            os.mkdir(self.workdir, 0o700)  # the next job's, fresh
        except OSError:
            ok = False
        return ok


def sweep(children, keep):
    """Kills every process a job left behind (reparented to the controller, the subreaper; `children`: its
    /proc/self/task/PID/children, open), all but the pids in `keep`. (True, or False if some survive; the CPU time
    the processes it reaped used, in microseconds.)"""
    cpu_us = 0
    for _ in range(50):
        try:
            pids = [p for p in map(int, os.pread(children, 1 << 16, 0).split()) if p not in keep]
        except OSError:
            pids = []
        if not pids:
            return True, cpu_us
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        for p in pids:
            try:
                usage = os.wait4(p, 0)[2]
            except OSError:
                continue
            cpu_us += int((usage.ru_utime + usage.ru_stime) * 1e6)
    return False, cpu_us


class Leftovers:
    """What the jobs leave in the sandbox, found and undone after each: the processes reparented to the controller
    swept (all but `keep`, the zygotes), the zygotes resumed and read from outside, the controller's own limits read,
    the dirs cleaned (`dirs`, a Cleanup). `broken`: why no more job may run here (something could not be undone: the
    runner replaces the sandbox), or None."""

    def __init__(self, dirs, keep):
        self.dirs, self.keep = dirs, keep
        self.broken = None
        # /proc/self/task/PID/children, kept open and read again with pread (cheaper than open, read and close)
        self.children = os.open('/proc/self/task/%d/children' % os.getpid(), os.O_RDONLY)

    def after_job(self, alive, clean):
        """After a job: its processes swept; each zygote of `alive` (those live as it began) asked for its next spare
        (its fork may have failed during the job: the sandbox's process limit) and, when the job did not end `clean`ly
        in a reuse process, resumed (SIGCONT: a stopped one goes on) and read from outside; the controller's own limits
        read. (Why the sandbox retires, or None; the CPU time of the processes swept, in microseconds.)"""
        swept, orphans_us = sweep(self.children, self.keep)
        reason = None if swept else 'unswept'  # a process of the job survived SIGKILL
        for z in alive:
            if not z.dead:
                if not clean:
                    try:
                        os.kill(z.pid, signal.SIGCONT)
                    except OSError:
                        pass
                z.ask()
            if not clean and reason is None and (z.dead or zygote_tampered(z)):
                reason = 'zygote'
        if controller_tampered():
            reason = 'tampered'  # the job reniced or prlimited the controller
        return reason, orphans_us

    def sweep_all(self):
        """At the controller's end: every process but the zygotes killed."""
        sweep(self.children, self.keep)
