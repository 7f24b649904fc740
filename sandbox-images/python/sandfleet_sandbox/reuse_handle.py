"""The controller's handle on a reuse process, and what the controller trusts of it.

A reuse process runs its jobs' code in its own address space, so nothing it says about itself is proof: a job can find
its nonce, write frames on its report pipe, switch its check off. The handle takes each frame as a claim, and holds it
to what the controller reads from outside the process (/proc, the pipes, signals), where no job can reach:
- the report pipe carries one sequence: `R` once; then for each job `D` and `V`, each with that job's nonce (`T` and
  `E` after a taint). Any other line, a stale or repeated nonce, a frame while no job is in flight or after its
  verdict, is a violation;
- at `D` the process has one thread and no child (a job that left either ends as a forked one, and writes no `D`);
  its stdout and stderr say nothing more until its next job; after a `T` it writes no `D` or `V` (it ends as a forked
  job ends, by its exit);
- after `V` it runs nothing until its next job: before every job of the sandbox the controller finds it blocked (or
  stopped), its CPU time where it was when first found so; while a job of another tenant runs, it is stopped
  (SIGSTOP). It is given its next job only if it still runs nothing, its pipes are empty, and it has one thread and
  no child.
A violation kills the process, and the job in flight on it is answered `infra_error`. A job that takes the process
over on purpose can still answer the later jobs of that process: the controller gives a reuse process the jobs of one
tenant only (`tenant`), so those are its own tenant's.
"""
import fcntl
import json
import os
import select
import sys
import time
import _signal

from .tamper_checks import threads

# How long a reuse process may take to block (or stop) after its verdict: it is a few instructions from its read.
FREEZE_WAIT_S = 0.5
STOPPED = (b'T', b't')
IDLE = (b'S',) + STOPPED  # blocked in its read of the next job, or stopped
SPIN = 50  # looks between yields before each further look waits a millisecond
FIONREAD = 0x541B  # the bytes waiting in a pipe (Linux's ioctl number, on either end)


class ReuseHandle:
    """The controller's handle on a reuse process: its pipes (job, stdout, stderr, report; the controller's ends), its
    state (`warming` until its baseline is taken, then `idle` (stopped), `busy` while it runs a job, `checking` until
    its verdict, `gone`), what its report pipe said, and `violation`: the first thing it did that the protocol does not
    allow (None while it did none)."""

    def __init__(self, pid, fds):
        self.pid = pid
        self.job_w, self.out_r, self.err_r, self.rep_r = fds
        os.set_blocking(self.job_w, False)  # a process that does not read its job never holds the controller (send)
        self.state = 'warming'
        self.buf = b''  # what the report pipe said after its last newline
        self.nonce = None  # the nonce of the job in flight (None: none is)
        self.done = None  # the job's end (`D`), once reported
        self.error = None  # a tainted job's error report (`E`)
        self.tainted = None  # what tainted the job (`T`), or None
        self.retire = None  # the verdict's reason to retire (`V`), or None
        self.violation = None
        self.tenant = None  # the tenant whose jobs it runs, bound by its first job
        # why it leaves service after its verdict however the verdict goes (its job ran out of memory)
        self.drop_after = None
        self.statm = os.open('/proc/%d/statm' % pid, os.O_RDONLY)
        self.stat = os.open('/proc/%d/stat' % pid, os.O_RDONLY)
        self.sched = os.open('/proc/%d/schedstat' % pid, os.O_RDONLY)
        self.children = os.open('/proc/%d/task/%d/children' % (pid, pid), os.O_RDONLY)
        self.pidfd = os.pidfd_open(pid)  # signals reach this process, never one that took its pid after it was reaped
        self.cpu_at = self.cpu_seen = 0  # its CPU time as its job was handed to it, and as last read (ns)
        self.idle_cpu = None  # its CPU time once found blocked (or stopped) after its verdict; None while it may run
        self.stopped = False  # stopped by the controller (isolate): a job of another tenant runs
        self.jobs, self.since = 0, 0.0
        self.outputs = select.poll()  # its stdout, stderr and report pipes, at once
        for fd in (self.out_r, self.err_r, self.rep_r):
            self.outputs.register(fd, select.POLLIN)
        self.exit = select.poll()  # its pidfd: readable once it exited
        self.exit.register(self.pidfd, select.POLLIN)

    def begin(self, nonce, tenant):
        self.state, self.nonce, self.done, self.error, self.tenant = 'busy', nonce, None, None, tenant

    def read(self):
        """Reads the report pipe; False at its end (the process is gone)."""
        try:
            data = os.read(self.rep_r, 65536)
        except BlockingIOError:
            return True
        if not data:
            return False
        buf = self.buf + data
        if len(buf) > 1 << 20:  # no frame is this long
            self.violate('a report line of over 1 MiB')
            buf = b''
        *lines, self.buf = buf.split(b'\n')
        for line in lines:
            self.on_line(line)
        return True

    def send(self, data, patience_s, limit_s=None):
        """Writes `data` on its job pipe, waiting for it to read while the pipe is full. False when it read nothing for
        `patience_s` (its loop reads its job at once: a job larger than the pipe goes a pipe-full at a time, each read
        as soon as it is there), or did not read it all within `limit_s` (None: `patience_s`)."""
        view, p, now = memoryview(data), None, time.perf_counter()
        until, end = now + patience_s, now + (patience_s if limit_s is None else limit_s)
        while view:
            try:
                view = view[os.write(self.job_w, view) :]
                until = min(time.perf_counter() + patience_s, end)  # it read: patience again
            except BlockingIOError:
                left = until - time.perf_counter()
                if left <= 0:
                    return False
                if p is None:
                    p = select.poll()
                    p.register(self.job_w, select.POLLOUT)
                p.poll(max(1, int(left * 1000)))
        return True

    def unread(self):
        """Bytes of its job still in its job pipe (a reuse process reads its job as soon as it is let run)."""
        try:
            return int.from_bytes(fcntl.ioctl(self.job_w, FIONREAD, b'\0\0\0\0'), sys.byteorder)
        except OSError:
            return 0

    def violate(self, what):
        if self.violation is None:
            self.violation = what

    def on_line(self, line):
        """One line of the report pipe, held to the protocol's order (each frame is written after a newline: empty
        lines are the separators)."""
        if not line:
            return
        kind, rest = line[:1], line[1:]
        if kind == b'T':
            if self.state != 'busy':
                return self.violate('a taint while no job ran')
            if self.tainted is None:
                self.tainted = rest.decode('utf-8', 'replace')[:64]
            return
        if self.tainted is not None:
            # After a taint the job ends as a forked one, by its exit, with at most an error report `E` (read as a
            # forked job's report is): an end or a verdict is the job's own writing (it wrote the taint itself, or
            # these).
            if kind == b'E':
                try:
                    self.error = json.loads(rest)
                except ValueError:
                    pass
            elif kind in (b'D', b'V'):
                self.violate('an end or a verdict after a taint')
            return
        if kind == b'R':
            if self.state != 'warming':
                return self.violate('a second ready line')
            self.state = 'idle'
            return
        if kind not in (b'D', b'V'):
            return self.violate('a report line of unknown kind %r' % kind)
        try:
            frame = json.loads(rest)
        except ValueError:
            return self.violate('a report line that is not JSON')
        if not isinstance(frame, dict) or frame.get('nonce') != self.nonce or self.nonce is None:
            return self.violate('a %s line with another nonce than its job\'s' % kind.decode())
        if kind == b'D':
            if self.state != 'busy':
                return self.violate('a second end of its job')
            self.done, self.state = frame, 'checking'  # its verdict may come in the same read
        else:
            if self.state != 'checking':
                return self.violate('a verdict before its job\'s end, or a second one')
            self.retire, self.nonce = frame.get('retire'), None  # a nonce answers once
            self.state = 'idle' if self.retire is None else 'gone'
            self.idle_cpu = None  # taken once it is found blocked (settled)

    # ── what the controller reads from outside ──

    def cpu_ns(self):
        """CPU time the process used so far, in nanoseconds (the kernel's count for its one thread); its last reading
        once it is gone."""
        try:
            self.cpu_seen = int(os.pread(self.sched, 64, 0).split()[0])
        except (OSError, ValueError, IndexError):
            pass
        return self.cpu_seen

    def resting_cpu(self):
        """Its CPU time once the kernel has counted the run that ended in its block or stop: the state letter changes a
        little before the switch away is counted, and while it is still on a CPU the reading grows, so it is read until
        two readings a yield apart agree."""
        last = self.cpu_ns()
        for _ in range(SPIN):
            os.sched_yield()
            now = self.cpu_ns()
            if now == last:
                return now
            last = now
        return last

    def run_state(self):
        """Its state letter (R, S, D, T, t, Z, …), or None once it is gone."""
        try:
            return os.pread(self.stat, 1024, 0).rsplit(b')', 1)[1].split()[0]
        except (OSError, IndexError):
            return None

    def alone(self):
        """Whether it has one thread and no child."""
        return self.company() is None

    def company(self):
        """What it has besides its one thread (`n threads`, `children PIDS`), or None; None too once it is gone (it
        answers nothing more: its check failed and it exited, say)."""
        try:
            n, kids = threads(self.stat), os.pread(self.children, 256, 0).split()
        except ProcessLookupError:
            return None
        except (OSError, IndexError, ValueError) as e:
            return 'unreadable (%s)' % e
        if n != 1:
            return '%d threads' % n
        return 'children %s' % b' '.join(kids).decode() if kids else None

    def silent(self):
        """Whether nothing waits on its stdout, stderr and report pipes (one poll; what waits is read and dropped)."""
        if not self.outputs.poll(0):
            return self.violation is None and not self.buf
        for fd in (self.out_r, self.err_r):
            try:
                os.read(fd, 65536)
            except OSError:
                pass
        self.read()
        return False

    def settled(self, full=True):
        """Whether it runs nothing between its jobs: blocked reading its next job (or stopped), its CPU time unmoved
        since
        it was first found so after its verdict; `full`: and alone and silent. The first time, waits for it to block
        (at most FREEZE_WAIT_S: it is a few instructions from the read, as a rule) and takes its CPU time."""
        if self.idle_cpu is None:
            waited = 0
            while self.run_state() not in IDLE:
                if waited >= FREEZE_WAIT_S * 1000 + SPIN:
                    return False
                if waited < SPIN:
                    os.sched_yield()  # a few instructions from its read, as a rule
                else:
                    select.select((), (), (), 0.001)
                waited += 1
            self.idle_cpu = self.resting_cpu()
        if self.cpu_ns() != self.idle_cpu:
            return False  # found blocked since: it ran no instruction, or it moved
        return not full or self.quiet()

    def quiet(self):
        """Alone (one thread, no child) and silent (nothing waits on its pipes)."""
        return self.alone() and self.silent()

    def isolate(self):
        """Stops it while a job of another tenant runs in the sandbox: nothing it could do then runs beside that job.
        Its CPU time is taken again once it is stopped (the stop itself is its CPU). False when it does not stop."""
        if self.stopped:
            return True
        try:
            _signal.pidfd_send_signal(self.pidfd, _signal.SIGSTOP)
        except OSError:
            return False
        self.stopped, waited = True, 0
        while self.run_state() not in STOPPED:
            if waited >= FREEZE_WAIT_S * 1000 + SPIN:
                return False
            if waited < SPIN:
                os.sched_yield()  # a context switch away, as a rule
            else:
                select.select((), (), (), 0.001)
            waited += 1
        self.idle_cpu = self.resting_cpu()
        return True

    def thaw(self):
        """Lets it run its next job (continued, when it was stopped)."""
        self.idle_cpu = None
        if self.stopped:
            self.stopped = False
            _signal.pidfd_send_signal(self.pidfd, _signal.SIGCONT)

    def pages(self):
        return int(os.pread(self.statm, 256, 0).split()[0])

    def gone(self):
        """Whether the process has exited (its pidfd is readable), reaped by its zygote or not yet."""
        return bool(self.exit.poll(0))

    def kill(self):
        try:
            _signal.pidfd_send_signal(self.pidfd, _signal.SIGKILL)
        except OSError:
            pass

    def close(self):
        for fd in (
            self.job_w,
            self.out_r,
            self.err_r,
            self.rep_r,
            self.statm,
            self.stat,
            self.sched,
            self.children,
            self.pidfd,
        ):
            try:
                os.close(fd)
            except OSError:
                pass
        self.state = 'gone'
