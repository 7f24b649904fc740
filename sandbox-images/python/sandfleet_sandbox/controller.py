"""sandfleet executor: NDJSON frames on stdin/stdout; jobs forked ahead of time from warm zygotes.

See docs/executor-protocol.md. Standard library only; CPython 3.11 and 3.12. Built from the modules
of sandbox-images/python/sandfleet_sandbox/ by build.py, this module last.
The controller (this process) owns the channel, a private dup of fd 1; fds 0/1/2 point at /dev/null
and no other process holds the channel, so nothing a job writes can reach it. Zygote processes
(`bare`: what the executor itself imports; `std`: plus the common standard library; `sym`: plus
sympy and mpmath; `sci`: plus numpy and scipy too) each keep one child forked ahead of time,
waiting on a pipe for its job; the controller picks the cheapest tier that has what the job
imports, compiles the code, writes job and code object into that child's pipe and drains its
fd-level stdout/stderr.
"""
import base64
import fcntl
import json
import marshal
import os
import resource
import select
import signal
import socket
import stat
import sys
import time

from .libc import prctl
from .limits import NPROC, SOFT_STOP_S, address_space, timeout_ms_of
from .files import fetch_files
from .tampering import RLIMITS, SPARE_LIMITS, controller_tampered, signalled, tampered, zygote_tampered
from .seccomp import add_seccomp
from .job import MAIN_FILE, PLACES, SCRATCH, WORKDIR
from .tiers import pick_tier, plan_tiers
from .reuse import TAGS_WORK
from .taint import static_taint
from .reuser import Reuser
from .zygote import Zygote
from .cleanup import Cleanup, remove_tree, sweep
from .capture import DEFAULT_OUTPUT_CAP, Capture
from .results import ending, failed
from .judge import judge

# How long a job runs before the controller also watches its pipes (a full pipe blocks the job until then).
PATIENCE_S = float(os.environ.get('SANDFLEET_PIPE_PATIENCE_MS', '20')) / 1000
# The most the controller reads of the runner's channel at once (a frame of megabytes comes in few reads), and the
# buffer it asks the kernel for on the channel and on a job pipe whose job is larger than a pipe holds by default (each
# pipe-full is a turn between the writer and the reader: fewer turns under load).
CHANNEL_READ = 1 << 20
BIG_BUFFER = 1 << 20
PIPE_BYTES = 65536  # a pipe's default capacity (Linux)
F_SETPIPE_SZ = 1031
# How long a spare may take to read a job larger than its pipe holds (it reads at once, as fast as it is written; one
# that took this long is stuck, and the next spare takes the job).
HAND_OVER_WAIT_S = 30.0
# The sandbox's memory cgroup, as a container sees it (v2, then v1): its count of OOM kills.
OOM_FILES = ('/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control')


def oom_kills():
    """OOM kills in this sandbox's memory cgroup so far, or None where no cgroup file is visible."""
    for path in OOM_FILES:
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(' ')
                    if key == 'oom_kill':
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def oom_score_adj(value):
    """Sets this process's OOM score adjustment (writable only while the process is dumpable: no job may run then)."""
    prctl(4, 1)  # PR_SET_DUMPABLE
    try:
        fd = os.open('/proc/self/oom_score_adj', os.O_WRONLY)
        try:
            os.write(fd, b'%d' % value)
        finally:
            os.close(fd)
    except OSError:
        pass
    prctl(4, 0)


def channel():
    """The runner's channel: (fd read from, fd written to). stdin/stdout; or, when SANDFLEET_CHANNEL names the runner's
    listening Unix socket (the docker driver binds it into the container), that socket, connected once, here, before
    any job runs."""
    path = os.environ.get('SANDFLEET_CHANNEL')
    if not path:
        fds = os.dup(0), os.dup(1)
        if stat.S_ISFIFO(os.fstat(fds[0]).st_mode):
            grow_pipe(fds[0], BIG_BUFFER)
        return fds
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BIG_BUFFER)  # the kernel caps it (net.core.rmem_max)
    except OSError:
        pass
    sock.connect(path)
    fd = sock.detach()
    return fd, fd


def grow_pipe(fd, size):
    """Asks for a pipe buffer of `size` bytes on pipe `fd` (either end); where it is refused (past
    /proc/sys/fs/pipe-max-size, or the user's pipe pages), the pipe keeps its own."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, size)
    except OSError:
        pass


def job_size(job):
    """About the bytes of a job's hand-over to its process: its code, stdin and files as its frame carries them."""
    files = job.get('files')
    size = len(job.get('code') or '') + len(job.get('stdin') or '')
    return size + (sum(len(v) for v in files.values() if isinstance(v, str)) if isinstance(files, dict) else 0)


class Taken:
    """The process a job runs in, from when its job was handed to it: tier `z`, its pid and pipes (job, stdout, stderr,
    report: the controller's ends), `reuser` (its Reuser when it is a reuse process; None: a spare, forked for it) and
    `refused` (why a job that asked for reuse runs forked, or None); then what the controller saw of the run."""

    def __init__(self, z, pid, fds, reuser, refused):
        self.z, self.pid, self.fds, self.reuser, self.refused = z, pid, fds, reuser, refused
        self.t0 = time.perf_counter()  # the job's time runs from here
        self.capture = None  # its output (watch_run)
        self.duration, self.timed_out = (
            0.0,
            False,
        )  # its run time in ms; whether the controller stopped it at its deadline
        # after_run: the end a reuse process reported, the wait status of a forked one (None both: its zygote is gone),
        # its CPU time in ns (None: unknown), why the sandbox retires (None: it goes on), the files it asked for back
        # and why some were not, its error report
        self.done = self.wstatus = self.cpu_ns = self.retire = self.report = None
        self.files, self.fetch_errors = {}, {}


class Controller:
    def __init__(self):
        self.chan_in, self.chan = channel()
        null = os.open('/dev/null', os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        os.set_inheritable(self.chan_in, False)
        os.set_inheritable(self.chan, False)
        self.buf, self.frames, self.closing, self.told = [], [], False, None  # buf: the chunks of a frame not ended yet
        self.running = None  # the reuse process running the job, if one is
        self.judge_control = []  # the runner's word on the judge that runs: its acks and its stop (judge.py)
        self.after_reuse = None  # (zygote, reuse process) of the job just answered: its clean-up follows its verdict
        self.last_clean = None  # the reuse process that ran the last job and passed its check since, if one did
        self.broken = None  # why no more job may run here (the runner replaces the sandbox), or None
        self.dead = []  # zygotes that died and are not reaped yet
        self.cleanup = Cleanup(WORKDIR, SCRATCH)
        self.ooms = oom_kills()
        # what every tier has: the executor's own imports (a job importing only those runs on bare)
        self.loaded = frozenset(m.split('.')[0] for m in sys.modules)
        # bare first: forked before anything else is imported or allocated here (each page it holds is copied at each
        # fork)
        self.zygotes = {'bare': Zygote('bare', [])}
        self.planned = plan_tiers()
        for name in self.planned:
            if name not in self.zygotes:
                self.zygotes[name] = Zygote(name, list(self.zygotes.values()))
        self.keep = {z.pid for z in self.zygotes.values()}
        # /proc files kept open and read again with pread (cheaper than open, read and close each time)
        self.children = os.open('/proc/self/task/%d/children' % os.getpid(), os.O_RDONLY)
        self.by_fd = {z.sock.fileno(): z for z in self.zygotes.values()}
        self.poller = select.poll()
        self.poller.register(self.chan_in, select.POLLIN)
        for fd in self.by_fd:
            self.poller.register(fd, select.POLLIN)
        # What the channel is read into (allocated once the zygotes are forked: none of them holds it)
        self.inbuf = memoryview(bytearray(CHANNEL_READ))

    def send(self, frame):
        os.write(self.chan, json.dumps(frame).encode() + b'\n')

    def pump(self, timeout_ms):
        """One poll round: zygote messages and channel input. Returns the fds that were readable."""
        events = self.poller.poll(timeout_ms)
        for fd, _ in events:
            z = self.by_fd.get(fd)
            if isinstance(z, Reuser):
                if not z.read():
                    self.poller.unregister(fd)
                    del self.by_fd[fd]
            elif z is not None:
                kind = z.on_message()
                if kind is None:
                    self.poller.unregister(fd)
                    del self.by_fd[fd]
                    self.dead.append(z.pid)  # reaped once it has exited
                    self.send({'op': 'log', 'level': 'error', 'message': 'zygote %s exited' % z.name})
                if kind is None or kind == b'r':
                    self.tell()
            elif fd == self.chan_in:
                self.read_channel()
        self.settle()
        return events

    def read_channel(self):
        """One read of the runner's channel, its frames taken. A frame of megabytes (stdin, files) comes in many reads:
        its pieces are joined once, at its newline (joining and scanning the whole buffer at each read would be
        quadratic in the frame's size, and each copy of megabytes costs the job)."""
        n = os.readv(self.chan_in, [self.inbuf])
        if not n:
            self.closing = True
            self.poller.unregister(self.chan_in)
            return
        data = bytes(self.inbuf[:n])
        start, nl = 0, data.find(b'\n')
        while nl != -1:
            if self.buf:
                self.buf.append(data[start:nl])
                line, self.buf = b''.join(self.buf), []
            else:
                line = data[start:nl]
            self.take(line)
            start, nl = nl + 1, data.find(b'\n', nl + 1)
        if start < n:
            self.buf.append(data[start:] if start else data)

    def take(self, line):
        """One frame of the runner's: `exec` queued, `shutdown` heeded; a line that is not JSON logged."""
        if not line.strip():
            return
        try:
            frame = json.loads(line)
        except ValueError:
            self.send({'op': 'log', 'level': 'error', 'message': 'a frame that is not JSON'})
            return
        if frame.get('op') == 'shutdown':
            self.closing = True
        elif frame.get('op') in ('exec', 'judge'):
            self.frames.append(frame)
        elif frame.get('op') in ('judge_ack', 'judge_stop'):
            self.judge_control.append(frame)

    def tell(self):
        """After `ready`: one `tier` frame per tier that finished warming, or died."""
        if self.told is None:
            return
        for z in self.zygotes.values():
            state = 'dead' if z.dead else 'warm' if z.warm else None
            if state is None or self.told.get(z.name) == state:
                continue
            self.told[z.name] = state
            if z.name != 'bare' or z.dead:
                self.send({'op': 'tier', 'name': z.name, 'ready': not z.dead, 'ms': z.ms, 'modules': z.modules})

    def serve(self):
        bare = self.zygotes['bare']
        while not bare.ready and not bare.dead:
            self.pump(-1)
        if bare.dead:
            sys.exit(1)
        self.send(
            {
                'op': 'ready',
                'protocol': 1,
                'pid': os.getpid(),
                'python': sys.version.split()[0],
                'tiers': self.planned,
                'packages': {},
                'isolation': ['fork', 'reuse'] if TAGS_WORK else ['fork'],
            }
        )
        self.told = {}
        self.tell()
        while not self.closing:
            if self.frames:
                frame = self.frames.pop(0)
                self.send(judge(self, frame) if frame.get('op') == 'judge' else self.run(frame))
                if self.after_reuse is not None:
                    self.clean_after_reuse()
                self.settle()  # a reuse process whose verdict came with its job's end
            else:
                self.pump(-1)
        sweep(self.children, self.keep)
        remove_tree(WORKDIR)

    def tier_for(self, frame):
        """The job's zygote, once it has a spare child; a cheaper one when the job's tier died; None when the job's
        `wait_ms` (what is left of its queue timeout) ran out while its tier warmed."""
        while True:
            z = self.zygotes[
                pick_tier(frame.get('code', ''), {n for n, z in self.zygotes.items() if not z.dead}, self.loaded)
            ]
            if not z.warm and not z.dead:  # the runner allows a job that waits for a warming tier more time
                self.send({'op': 'waiting', 'id': frame.get('id'), 'tier': z.name})
                t0 = time.perf_counter()
                limit = frame.get('wait_ms')
                end = t0 + limit / 1000 if isinstance(limit, (int, float)) else None
                while not z.ready and not z.dead and not self.closing:
                    if end is None:
                        self.pump(-1)
                        continue
                    left = end - time.perf_counter()
                    if left <= 0:
                        return None
                    self.pump(max(1, int(left * 1000)))
                frame['waited_ms'] = (time.perf_counter() - t0) * 1000
            while not z.ready and not z.dead and not self.closing:
                self.pump(-1)
            if not z.dead or z.name == 'bare':
                return z

    def run(self, job):
        """Runs one job and answers its result frame: on its tier's reuse process when it asks for `reuse` and one is
        idle and may take this code, else on the tier's spare, forked for it."""
        if self.broken is not None:
            return failed(job, 'infra_error', 'SandboxTampered', self.broken + '; the sandbox is replaced', 'cleanup')
        self.check_idle(job.get('tenant'))
        alive = [z for z in self.zygotes.values() if not z.dead]  # one that dies while the job runs retires the sandbox
        taken = self.take_process(job)
        if isinstance(taken, dict):
            return taken  # the job did not run: its result
        self.watch_run(job, taken)
        r = taken.reuser
        if r is not None and r.violation is not None:
            taken.capture.unwatch()
            return self.violated(job, taken.z, r, taken.duration, alive, ran=not r.unread())
        self.after_run(job, taken, alive)
        return self.result_of(job, taken)

    def reuse_refusal(self, job):
        """Why a job that asks for `reuse` runs forked whatever its tier's reuse process (`unsupported`, `static`), None
        when it may run reused; None too for a job that asks for `fork`."""
        if job.get('isolation') != 'reuse':
            return None
        return 'unsupported' if not TAGS_WORK else 'static' if static_taint(job.get('code', '')) else None

    def take_process(self, job):
        """The process the job runs in, its job handed to it (a `Taken`): its tier's reuse process when the job may run
        there and it takes the job, else the tier's spare; or the result of a job that cannot run (its tier still
        warming at the end of its wait, the zygote gone, the spare changed by an earlier job, three spares gone)."""
        reuse = job.get('isolation') == 'reuse'
        refused = self.reuse_refusal(job)
        for _ in range(3):  # an earlier job may have killed the spare job process: take the next one
            z = self.tier_for(job)
            if z is None:
                result = failed(
                    job,
                    'queue_timeout',
                    'TierWarming',
                    'the tier this job needs was still warming when its queue timeout ran out (%d ms)' % job['wait_ms'],
                )
                result['waited_ms'] = job['wait_ms']
                return result
            taken = None
            if reuse and refused is None:
                r, refused = self.hand_to_reuser(z, job)
                if r is not None:
                    self.running = r  # its own, until its job is answered: settle leaves it to this
                    taken = Taken(z, r.pid, (r.job_w, r.out_r, r.err_r, r.rep_r), r, refused)
            if taken is None:
                if z.dead or self.closing or z.spare is None:
                    return failed(job, 'killed', 'ZygoteExited', 'the %s zygote is gone' % z.name, 'zygote')
                if reuse:
                    z.ask_reuse()  # for the next reuse job of this tier
                taken = self.take_spare(z, job, refused)
                if taken is None:
                    continue
                if isinstance(taken, dict):
                    return taken
            # A job larger than a pipe holds took a while to reach its process: the runner's hard deadline counts from
            # here, as the job's own does (Taken.t0).
            if job_size(job) > PIPE_BYTES:
                self.send({'op': 'started', 'id': job.get('id')})
            return taken
        return failed(job, 'killed', 'SpareExited', 'the job process was killed before its job came', 'zygote')

    def take_spare(self, z, job, refused):
        """Tier `z`'s spare with the job written to it (a `Taken`); the result of a job that cannot run when an earlier
        job changed the spare (the sandbox is replaced); None when the spare is gone (the next one is taken)."""
        try:
            os.kill(z.pid, signal.SIGCONT)  # a job of a reuse process may have stopped it: it reports this job's end
        except OSError:
            pass
        pid, fds = z.spare
        z.spare = None
        z.ready = False
        z.ask()  # the next job process is forked while this job runs
        try:
            if tampered(pid):  # reniced, limited, pinned by a job that ran while it waited
                os.kill(pid, signal.SIGKILL)
                for fd in fds:
                    os.close(fd)
                return failed(
                    job,
                    'infra_error',
                    'SandboxTampered',
                    'an earlier job changed the limits of this sandbox\'s processes; the sandbox is replaced',
                    'tampered',
                )
            if signalled(
                pid
            ):  # an earlier job signalled it, and the signal waits (a stopped process keeps it): it would end this job
                os.kill(pid, signal.SIGKILL)
                raise OSError('a signal is pending for the spare job process')
            self.limit(z, pid, job)
            os.kill(pid, signal.SIGCONT)  # or a job stopped it
            self.hand_over(pid, fds[0], self.job_bytes(job, None))
            return Taken(z, pid, fds, None, refused)  # its time runs from here
        except OSError:
            for fd in fds:
                os.close(fd)
            return None

    def hand_over(self, pid, job_w, data):
        """Writes job `data` to spare `pid`'s job pipe (the job process reads it all before it runs anything). What the
        pipe does not take at once goes as the process reads it, the controller pumping its channel and its zygotes
        meanwhile; raises OSError when the process is gone, or did not read it within HAND_OVER_WAIT_S (it is killed).
        """
        if len(data) <= PIPE_BYTES:
            os.write(job_w, data)  # an empty pipe takes it whole
            return
        grow_pipe(job_w, BIG_BUFFER)
        os.set_blocking(job_w, False)
        view, until = memoryview(data), time.perf_counter() + HAND_OVER_WAIT_S
        self.poller.register(job_w, select.POLLOUT)
        try:
            while view:
                try:
                    view = view[os.write(job_w, view) :]
                except BlockingIOError:
                    left = until - time.perf_counter()
                    if left <= 0:
                        os.kill(pid, signal.SIGKILL)
                        raise OSError('the spare job process did not read its job')
                    self.pump(max(1, int(left * 1000)))
        finally:
            self.poller.unregister(job_w)

    def watch_run(self, job, taken):
        """Reads the job's output while it runs, until its process ends (a forked job), its reuse process reports its
        end
        or breaks the protocol, or its deadline: then the soft stop (SIGTERM to its process group), SOFT_STOP_S later
        SIGKILL. Sets the Taken's `capture`, `duration` and `timed_out`."""
        z, pid, r = taken.z, taken.pid, taken.reuser
        _, out_r, err_r, rep_r = taken.fds
        if r is None:
            os.close(taken.fds[0])
        capture = taken.capture = Capture(
            out_r,
            err_r,
            rep_r if r is None else None,
            int(job.get('max_output_bytes') or DEFAULT_OUTPUT_CAP),
            self.poller,
        )
        deadline = taken.t0 + timeout_ms_of(job) / 1000
        # The pipes are watched only once the job has run PATIENCE_S: most jobs end sooner, their output waiting in the
        # pipes, and the controller wakes once, for the zygote's report of the exit (or the reuse process's end of the
        # job, on its report pipe, always watched), not also for each write.
        watch_from = taken.t0 + PATIENCE_S
        timed_out = killed = False
        while pid not in z.exits and not z.dead and (r is None or (r.done is None and r.violation is None)):
            now = time.perf_counter()
            left = deadline - now
            if (left <= 0 or self.closing) and not killed:
                if r is not None and not timed_out and r.unread():
                    r.violate('it did not take its job')  # the job never started: another sandbox runs it
                    break
                if (
                    not self.closing and not timed_out
                ):  # the deadline: the soft stop first (the executor's handler flushes
                    # what Python holds of the job's output; a handler of the job's own runs instead)
                    timed_out = True
                    if r is not None:
                        r.cpu_seen = r.cpu_ns()
                    try:
                        os.killpg(pid, signal.SIGTERM)
                    except OSError:
                        pass
                    deadline = now + SOFT_STOP_S
                    continue
                killed = True
                if r is not None:
                    r.cpu_seen = r.cpu_ns()  # its CPU as it is killed (once reaped, it is read no more)
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                deadline = time.perf_counter() + 1  # the zygote reports the exit; past this, give up on it
            elif left <= 0:
                break
            if not capture.watching and now >= watch_from:
                capture.watch()
            wait = left if capture.watching else min(left, watch_from - now)
            for fd, _ in self.pump(int(max(wait, 0) * 1000) + 1):
                if fd in capture.open:
                    capture.drain(fd)
        taken.duration, taken.timed_out = (time.perf_counter() - taken.t0) * 1000, timed_out
        if r is not None and r.done is not None and r.violation is None and not r.alone():
            r.violate(
                'not alone at its end: %s' % r.company()
            )  # a job that left a thread or child ends as a forked one: no D comes
        if r is not None and r.done is None and r.violation is None and r.unread():
            r.violate('it ended without taking its job')  # the job never started: another sandbox runs it

    def after_run(self, job, taken, alive):
        """After every job, a reuse process's clean end too (its word that it left nothing is no proof): what it left
        reparented to the controller is killed. After one that did not end cleanly in a reuse process the zygotes get
        SIGCONT (a stopped one resumes) and their limits, scheduling and lives are read; a zygote a clean reuse job may
        have stopped gets its SIGCONT as a forked job of its tier starts (the only job that needs it running). Then its
        output read to its end, its process let go (reaped, dropped, or kept for the next job), the files it asked for
        read back and the work dir cleaned (after a reuse process's verdict, when it goes on). Sets the Taken's `done`,
        `wstatus`, `cpu_ns`, `retire`, `files`, `fetch_errors` and `report`."""
        z, pid, r, capture = taken.z, taken.pid, taken.reuser, taken.capture
        done = taken.done = r.done if r is not None else None
        wstatus = taken.wstatus = z.exits.get(pid) if done is None else None
        if r is not None:
            cpu_ns = (r.cpu_ns() if done is not None else r.cpu_seen) - r.cpu_at
        else:
            cpu_ns = z.cpu_us.pop(pid, 0) * 1000 if wstatus is not None else None
        clean = done is not None
        swept, orphans_us = sweep(self.children, self.keep)
        if cpu_ns is not None:
            cpu_ns += orphans_us * 1000
        taken.cpu_ns = cpu_ns
        unswept = None if swept else 'unswept'  # a process of the job survived SIGKILL
        for other in alive:
            if not other.dead:
                if not clean:
                    try:
                        os.kill(other.pid, signal.SIGCONT)
                    except OSError:
                        pass
                other.ask()  # when its fork failed during the job (the sandbox's process limit)
            if not clean and unswept is None and (other.dead or zygote_tampered(other)):
                unswept = 'zygote'
        if controller_tampered():
            unswept = 'tampered'  # the job reniced or prlimited the controller
        self.last_clean = None
        capture.finish()
        if r is None:
            z.exits.pop(pid, None)
            capture.close()
        elif done is None:  # it ended as a forked job ends: tainted, timed out, crashed, os._exit
            self.drop(
                z,
                r,
                'timeout' if taken.timed_out else 'taint' if r.tainted else 'exit',
                r.tainted or 'the process ended with its job',
            )
        else:
            r.since, r.jobs = time.perf_counter(), r.jobs + 1
        self.running = None
        wanted = job.get('fetch_files') or ()
        if wstatus is not None or done is not None:
            taken.files, taken.fetch_errors = fetch_files(WORKDIR, wanted, PLACES)
        else:
            taken.files, taken.fetch_errors = {}, dict.fromkeys(wanted, 'not read: the zygote that ran the job is gone')
        if (
            done is not None
        ):  # the reuse process may go on (it drops the job's objects, then checks); cleaned after its verdict
            if wanted:
                r.send(b'g', 0)
            self.after_reuse, cleaned = (z, r), True
        else:
            cleaned = self.cleanup.clean()
        if r is not None:
            report = done['report'] if done is not None else r.error
        else:
            try:
                report = json.loads(capture.bufs[capture.rep_r]) if capture.bufs[capture.rep_r] else None
            except ValueError:
                report = None
        taken.report = report if isinstance(report, dict) else None
        # The sandbox takes the next job unless something of this one could not be undone.
        taken.retire = (
            unswept
            or (None if cleaned else 'cleanup')
            or ('zygote' if z.dead or (wstatus is None and done is None) else None)
        )

    def result_of(self, job, taken):
        """The result frame of a job that ran, from its Taken once after_run filled it in."""
        z, r, capture = taken.z, taken.reuser, taken.capture
        status, exit_code, error, out_of_memory = ending(
            job, z.name, taken.timed_out, taken.wstatus, taken.done, taken.report, self.oom_killed
        )
        if out_of_memory and taken.done is not None:
            r.drop_after = 'memory'  # its heap ran out: a fresh fork of its zygote takes over
        out, err = capture.out_r, capture.err_r
        result = {
            'op': 'result',
            'id': job.get('id'),
            'status': status,
            'exit_code': exit_code,
            'stdout': capture.text(out),
            'stderr': capture.text(err),
            'duration_ms': taken.duration,
            'truncated': {'stdout': capture.truncated[out], 'stderr': capture.truncated[err]},
            'error': error,
            'files': taken.files,
            'retire': taken.retire is not None,
            'tier': z.name,
            'isolation': 'reuse' if r is not None else 'fork',
        }
        if taken.retire is not None:
            result['retire_reason'] = taken.retire
        if taken.cpu_ns is not None:
            result['cpu_ms'] = round(taken.cpu_ns / 1e6, 3)
        if taken.fetch_errors:
            result['fetch_errors'] = taken.fetch_errors
        if taken.refused is not None:
            result['reuse_refused'] = taken.refused
        for key in (
            'returned',
            'returned_error',
        ):  # a judge's call test: its function's return value, as JSON, or why not
            if taken.report is not None and key in taken.report:
                result[key] = taken.report[key]
        if 'waited_ms' in job:
            result['waited_ms'] = job['waited_ms']
        return result

    def oom_killed(self):
        """Whether the sandbox's memory cgroup killed a process since the last time this was asked (never where no
        cgroup
        file is visible)."""
        ooms = oom_kills() if self.ooms is not None else None
        if ooms is None or ooms <= self.ooms:
            return False
        self.ooms = ooms
        return True

    def hand_to_reuser(self, z, job):
        """Tier `z`'s reuse process with `job` handed to it (its limits set, let run, the job written) and None; or None
        and why not: none is idle (`warming`), it runs another tenant's jobs (`tenant`), or what the controller reads of
        it from outside says it ran, wrote or was changed since its last verdict (`tampered`). The job then runs forked.
        """
        r = self.reuser_for(z)
        if r is None:
            return None, 'warming'
        if r.gone():  # killed while idle (a job of another tier can)
            self.drop(z, r, 'exit', 'the process ended between jobs')
            return None, 'warming'
        tenant = job.get('tenant')
        if r.jobs > 0 and r.tenant != tenant:
            self.drop(z, r, 'tenant', 'it ran jobs of another tenant')
            z.ask_reuse()
            return None, 'tenant'
        # Before any of its code runs again: running nothing since its verdict (check_idle, a moment ago), silent and
        # alone; and, unless it ran the last job and passed its check since (no other job's code ran), its limits and
        # signals as they were.
        # (The process that ran the last job and passed its check since has run nothing but its own loop: it need not
        # be found blocked first.)
        if (r is not self.last_clean and r.idle_cpu is None and not r.settled(full=False)) or not r.quiet():
            self.drop(z, r, 'tampered', r.violation or 'it ran, wrote or was not alone between its jobs')
            return None, 'tampered'
        if self.last_clean is not r and (tampered(r.pid, reused=True) or signalled(r.pid)):
            self.drop(z, r, 'tampered', 'an earlier job changed the limits or signals of this reuse process')
            return None, 'tampered'
        nonce = os.urandom(12).hex()
        try:
            r.cpu_at = r.cpu_seen = r.idle_cpu if r.idle_cpu is not None else r.cpu_ns()
            self.limit_reuse(r, job)
            r.thaw()
            data = self.job_bytes(job, nonce, wait_files=bool(job.get('fetch_files')))
            if len(data) > PIPE_BYTES:
                grow_pipe(r.job_w, BIG_BUFFER)
            taken = r.send(data, min(timeout_ms_of(job), TAKE_WAIT_MS) / 1000, HAND_OVER_WAIT_S)
        except (OSError, ValueError):  # gone, or a limit it lowered cannot be raised
            self.drop(z, r, 'exit' if r.gone() else 'tampered', 'its limits cannot be set for its next job')
            return None, 'warming'
        if not taken:  # it did not read its job: what runs in it is not the reuse process's loop (the job runs forked)
            self.drop(z, r, 'violation', 'it did not read its job')
            return None, 'tampered'
        r.begin(nonce, tenant)
        return r, None

    def check_idle(self, tenant):
        """Before each job: every idle reuse process runs nothing (blocked or stopped, its CPU time where it was when it
        was first found so after its verdict: no job ran since but its own, the controller runs one at a time); one that
        ran is dropped before another job runs beside it. One that ran another tenant's jobs is stopped while this job
        runs (a job of its own tenant may run beside it: what it could do to that job is its tenant's own doing)."""
        for z in self.zygotes.values():
            r = z.reuser
            if r is None or r.state != 'idle':
                continue
            if r is self.last_clean and r.tenant == tenant:
                continue  # it just gave its verdict; a job of its tenant comes
            if not r.settled(full=False):
                self.drop(z, r, 'tampered', r.violation or 'it ran between its jobs')
            elif r.jobs > 0 and r.tenant != tenant and not r.isolate():
                self.drop(z, r, 'tampered', 'it did not stop')

    def violated(self, job, z, r, duration, alive, ran=True):
        """The job's reuse process broke the protocol (a frame out of order or with another nonce, not alone at its
        end, its job never read): it is killed, what the job left is swept as after any job, and the job answered
        infra_error: nothing the process said can be told from what a job wrote itself. A job it never took (`ran`
        False) is answered as one an earlier job kept from running (SandboxTampered: the runner runs it elsewhere)."""
        what = r.violation
        r.kill()
        until = time.perf_counter() + 1
        while r.pid not in z.exits and not z.dead and time.perf_counter() < until:
            self.pump(max(1, int((until - time.perf_counter()) * 1000)))
        self.drop(z, r, 'violation', what)
        self.running = None
        swept, _ = sweep(self.children, self.keep)
        reason = None if swept else 'unswept'
        for other in alive:
            if not other.dead:
                try:
                    os.kill(other.pid, signal.SIGCONT)
                except OSError:
                    pass
                other.ask()
            if reason is None and (other.dead or zygote_tampered(other)):
                reason = 'zygote'
        if controller_tampered():
            reason = 'tampered'
        if not self.cleanup.clean():
            reason = reason or 'cleanup'
        self.last_clean = None
        if not ran:
            return failed(
                job,
                'infra_error',
                'SandboxTampered',
                'the reuse process given this job did not take it (an earlier job took it over); the job did not run',
                reason or 'tampered',
            )
        result = failed(
            job,
            'infra_error',
            'ReuseViolation',
            'the reuse process that ran this job broke the executor\'s protocol (%s): it was killed, '
            'and nothing it said answers the job' % what,
            reason,
        )
        result.update({'duration_ms': duration, 'tier': z.name, 'isolation': 'reuse'})
        return result

    @staticmethod
    def job_bytes(job, nonce, wait_files=False):
        """A job as its job process reads it from its pipe (job.read_job): the length of what follows, marshalled: the
        code, its code object (compiled here: a fresh fork paid ~1 ms of copy-on-write faults in compile()), the length
        of stdin, files and, for a reuse process, the job's nonce and whether it waits, after the job, until the
        controller has read the files it asked for back; then stdin itself (not marshalled: megabytes would be copied
        twice more, here and in the job process)."""
        code = job.get('code', '')
        stdin = (job.get('stdin') or '').encode()
        compiled = job.get('compiled') or precompile(code)  # a judge's program is compiled once, for all its tests
        payload = marshal.dumps(
            (code, compiled, len(stdin), job.get('files') or {}, nonce, wait_files, job.get('kind'))
        )
        return len(payload).to_bytes(8, 'little') + payload + stdin

    def clean_after_reuse(self):
        """After a job answered from a reuse process: its verdict awaited (the process dropped the job's objects, whose
        finalizers may have written files), then the work dir and scratch dirs cleaned. What cannot be cleaned breaks
        the sandbox: every later job is answered infra_error, and the runner replaces it."""
        z, r = self.after_reuse
        self.after_reuse = None
        self.await_verdict(z, r)
        if (
            r.state == 'gone' and z.reuser is r
        ):  # retired: it exits; the next job finds it reaped, as a forked job's process
            until = time.perf_counter() + 1
            while r.pid not in z.exits and not z.dead and time.perf_counter() < until:
                self.pump(max(1, int((until - time.perf_counter()) * 1000)))
            self.settle()
        if not self.cleanup.clean(ipc=False):
            self.broken = 'what a job left could not be removed'
        if r.state == 'idle' and z.reuser is r:
            if r.drop_after is not None:
                self.drop(z, r, r.drop_after, 'its job ran out of memory')
            else:
                self.last_clean = r  # found blocked, its CPU time taken, before the next job (check_idle)
        elif r.violation is not None and z.reuser is r:
            self.drop(z, r, 'violation', r.violation)

    def await_verdict(self, z, r):
        """Waits for reuse process `r` of tier `z` to end its check, at most CHECK_WAIT_S; past it, drops it as
        stuck."""
        until = r.since + CHECK_WAIT_S
        while (
            r.state == 'checking'
            and r.violation is None
            and r.pid not in z.exits
            and z.reuser is r
            and time.perf_counter() < until
        ):
            self.pump(max(1, int((until - time.perf_counter()) * 1000)))
        if r.violation is not None and z.reuser is r:
            self.drop(z, r, 'violation', r.violation)
        elif r.state == 'checking' and z.reuser is r:
            self.drop(z, r, 'stuck', 'no verdict within %d ms of its job' % (CHECK_WAIT_S * 1000))

    def reuser_for(self, z):
        """Tier `z`'s reuse process once it is idle (waiting out its check, at most CHECK_WAIT_S); None when it has none
        ready (one is asked for)."""
        r = z.reuser
        if r is not None and r.state == 'checking':
            self.await_verdict(z, r)
        if z.reuser is not None and z.reuser.pid in z.exits:
            self.settle()
        r = z.reuser
        if r is None:
            z.ask_reuse()
        return r if r is not None and r.state == 'idle' else None

    def drop(self, z, r, what, detail):
        """Retires reuse process `r` of tier `z` and tells the runner why."""
        r.kill()
        try:
            self.poller.unregister(r.rep_r)
        except (KeyError, ValueError):
            pass
        self.by_fd.pop(r.rep_r, None)
        r.close()
        if z.reuser is r:
            z.reuser = None
        z.cpu_us.pop(r.pid, None)
        if z.exits.pop(r.pid, None) is None:
            z.forget.add(r.pid)
        self.send({'op': 'retired', 'tier': z.name, 'reason': what, 'detail': detail[:200], 'jobs': r.jobs})

    def settle(self):
        """Watches the report pipe of each new reuse process; drops those gone (a failed check, an exit); reaps the
        zygotes
        that died (an OOM kill, a job's kill)."""
        for pid in list(self.dead):
            try:
                reaped = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                reaped = True
            if reaped:
                self.dead.remove(pid)
        for z in self.zygotes.values():
            for pid in [p for p in z.forget if p in z.exits]:
                z.forget.discard(pid)
                del z.exits[pid]
                z.cpu_us.pop(pid, None)
            r = z.reuser
            if r is None or r is self.running:
                continue
            if r.rep_r not in self.by_fd:
                self.by_fd[r.rep_r] = r
                self.poller.register(r.rep_r, select.POLLIN)
            if r.violation is not None and r.state != 'checking':  # while it checks, await_verdict answers for it
                self.drop(z, r, 'violation', r.violation)
            elif r.state == 'gone':
                what, detail = (
                    r.retire if isinstance(r.retire, list) and len(r.retire) == 2 else ('check', str(r.retire))
                )
                self.drop(z, r, str(what), str(detail))
            elif r.pid in z.exits:
                self.drop(z, r, 'exit', 'the process ended between jobs')

    def limit(self, z, pid, job):
        """Sets the job's own limits on spare `pid` of zygote `z`, from here (prlimit): address space (its size plus
        memory_mb), CPU time (a backstop past timeout_ms) and, where configured, processes."""
        mem = address_space(
            int(os.pread(z.statm, 256, 0).split()[0]), job
        )  # the zygote's size: the spare's, forked from it
        resource.prlimit(pid, resource.RLIMIT_AS, (mem, mem))
        cpu = timeout_ms_of(job) // 1000 + 2
        resource.prlimit(pid, resource.RLIMIT_CPU, (cpu, cpu + 1))
        if NPROC:
            resource.prlimit(pid, resource.RLIMIT_NPROC, (NPROC, NPROC))

    def limit_reuse(self, r, job):
        """A reuse process's limits for its next job: the soft ones only (a hard limit lowered could not be raised for
        the next job), what the job may use past what the process holds: its size plus memory_mb, its CPU time so far
        plus the backstop. (Raising them is refused inside: reuse.Watch.)"""
        for limit, value in (
            (resource.RLIMIT_AS, address_space(r.pages(), job)),
            (resource.RLIMIT_CPU, r.cpu_seen // 10**9 + timeout_ms_of(job) // 1000 + 2),
        ):
            hard = SPARE_LIMITS[RLIMITS.index(limit)][
                1
            ]  # as the zygote left it: the check, inside and from here, holds it
            resource.prlimit(r.pid, limit, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))
        if NPROC and r.jobs == 0:
            resource.prlimit(r.pid, resource.RLIMIT_NPROC, (NPROC, NPROC))


# How long a job waits for the verdict of its tier's reuse process before the process is retired as stuck.
CHECK_WAIT_S = 2.0
# How long a reuse process, let run, may leave a job larger than its pipe holds unread (its loop reads at once): each
# pipe-full of it (a job of megabytes, at most HAND_OVER_WAIT_S in all).
TAKE_WAIT_MS = 1000


def precompile(code):
    """The job's code compiled here, or None when it does not compile (the job then raises the error itself). Compiling
    in a fresh fork costs copy-on-write faults; here, where the compiler's pages are already private, a fraction of
    that; the code object travels to the job process marshalled."""
    try:
        return compile(code, MAIN_FILE, 'exec', dont_inherit=True)
    except BaseException:
        return None


def main():
    if os.environ.get('SANDFLEET_SECCOMP'):
        add_seccomp(base64.b64decode(os.environ.pop('SANDFLEET_SECCOMP')))
    prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: what a job leaves behind is reparented to us
    prctl(4, 0)  # PR_SET_DUMPABLE 0: job processes (same uid) cannot ptrace the controller or the zygotes
    for k in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        os.environ[k] = '1'
    # matplotlib: Agg, and a writable cache dir beside the work dir (a scratch dir's new entry: removed after each job),
    # so a job that imports it builds its font cache there instead of warning on stderr about a read-only home.
    os.environ.setdefault('MPLBACKEND', 'Agg')
    os.environ.setdefault('MPLCONFIGDIR', WORKDIR + '-matplotlib')
    # The OOM killer takes a job first: the zygotes and every job process inherit 1000; the controller goes back to 0
    # before any job runs.
    oom_score_adj(1000)
    controller = Controller()
    oom_score_adj(0)
    controller.serve()
