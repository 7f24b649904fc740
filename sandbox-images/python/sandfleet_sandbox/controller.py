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
import base64, json, marshal, os, resource, select, signal, socket, sys, time

from .libc import prctl
from .limits import NPROC, address_space, timeout_ms_of
from .files import fetch_files
from .tampering import controller_tampered, signalled, tampered
from .seccomp import add_seccomp
from .job import MAIN_FILE, WORKDIR
from .tiers import pick_tier, plan_tiers
from .zygote import Zygote
from .cleanup import SCRATCH, Cleanup, remove_tree, sweep

# How long a job runs before the controller also watches its pipes (a full pipe blocks the job until then).
PATIENCE_S = float(os.environ.get('SANDFLEET_PIPE_PATIENCE_MS', '20')) / 1000
# At its deadline a job gets SIGTERM (its handler flushes what Python holds of its output) and this long to go, then SIGKILL.
FLUSH_GRACE_S = float(os.environ.get('SANDFLEET_FLUSH_GRACE_MS', '100')) / 1000
# The sandbox's memory cgroup, as a container sees it (v2, then v1): its count of OOM kills.
OOM_FILES = ('/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control')


def oom_kills():
    """OOM kills in this sandbox's memory cgroup so far, or None where no cgroup file is visible."""
    for path in OOM_FILES:
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(' ')
                    if key == 'oom_kill': return int(value)
        except (OSError, ValueError): continue
    return None


def oom_score_adj(value):
    """Sets this process's OOM score adjustment (writable only while the process is dumpable: no job may run then)."""
    prctl(4, 1)  # PR_SET_DUMPABLE
    try:
        fd = os.open('/proc/self/oom_score_adj', os.O_WRONLY)
        try: os.write(fd, b'%d' % value)
        finally: os.close(fd)
    except OSError: pass
    prctl(4, 0)


def channel():
    """The runner's channel: (fd read from, fd written to). stdin/stdout; or, when SANDFLEET_CHANNEL names the runner's
    listening Unix socket (the docker driver binds it into the container), that socket, connected once, here, before
    any job runs."""
    path = os.environ.get('SANDFLEET_CHANNEL')
    if not path: return os.dup(0), os.dup(1)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    fd = sock.detach()
    return fd, fd


class Controller:
    def __init__(self):
        self.chan_in, self.chan = channel()
        null = os.open('/dev/null', os.O_RDWR)
        for fd in (0, 1, 2): os.dup2(null, fd)
        os.close(null)
        os.set_inheritable(self.chan_in, False); os.set_inheritable(self.chan, False)
        self.buf, self.frames, self.closing, self.told = [], [], False, None  # buf: the chunks of a frame not ended yet
        self.cleanup = Cleanup(WORKDIR, SCRATCH)
        self.ooms = oom_kills()
        # what every tier has: the executor's own imports (a job importing only those runs on bare)
        self.loaded = frozenset(m.split('.')[0] for m in sys.modules)
        # bare first: forked before anything else is imported or allocated here (each page it holds is copied at each fork)
        self.zygotes = {'bare': Zygote('bare', [])}
        self.planned = plan_tiers()
        for name in self.planned:
            if name not in self.zygotes: self.zygotes[name] = Zygote(name, list(self.zygotes.values()))
        self.keep = {z.pid for z in self.zygotes.values()}
        # /proc files kept open and read again with pread (cheaper than open, read and close each time)
        self.children = os.open('/proc/self/task/%d/children' % os.getpid(), os.O_RDONLY)
        self.by_fd = {z.sock.fileno(): z for z in self.zygotes.values()}
        self.poller = select.poll()
        self.poller.register(self.chan_in, select.POLLIN)
        for fd in self.by_fd: self.poller.register(fd, select.POLLIN)

    def send(self, frame): os.write(self.chan, json.dumps(frame).encode() + b'\n')

    def pump(self, timeout_ms):
        """One poll round: zygote messages and channel input. Returns the fds that were readable."""
        events = self.poller.poll(timeout_ms)
        for fd, _ in events:
            z = self.by_fd.get(fd)
            if z is not None:
                kind = z.on_message()
                if kind is None:
                    self.poller.unregister(fd); del self.by_fd[fd]
                    self.send({'op': 'log', 'level': 'error', 'message': 'zygote %s exited' % z.name})
                if kind is None or kind == b'r': self.tell()
            elif fd == self.chan_in:
                data = os.read(self.chan_in, 65536)
                if not data: self.closing = True; self.poller.unregister(fd); continue
                # A frame of megabytes (stdin, files) comes in many reads: its chunks are joined once, at its newline
                # (joining and scanning the whole buffer at each read would be quadratic in the frame's size).
                self.buf.append(data)
                if b'\n' not in data: continue
                *lines, rest = b''.join(self.buf).split(b'\n')
                self.buf = [rest] if rest else []
                for line in lines:
                    if not line.strip(): continue
                    try: frame = json.loads(line)
                    except ValueError:
                        self.send({'op': 'log', 'level': 'error', 'message': 'a frame that is not JSON'}); continue
                    if frame.get('op') == 'shutdown': self.closing = True
                    elif frame.get('op') == 'exec': self.frames.append(frame)
        return events

    def tell(self):
        """After `ready`: one `tier` frame per tier that finished warming, or died."""
        if self.told is None: return
        for z in self.zygotes.values():
            state = 'dead' if z.dead else 'warm' if z.warm else None
            if state is None or self.told.get(z.name) == state: continue
            self.told[z.name] = state
            if z.name != 'bare' or z.dead:
                self.send({'op': 'tier', 'name': z.name, 'ready': not z.dead, 'ms': z.ms, 'modules': z.modules})

    def serve(self):
        bare = self.zygotes['bare']
        while not bare.ready and not bare.dead: self.pump(-1)
        if bare.dead: sys.exit(1)
        self.send({'op': 'ready', 'protocol': 1, 'pid': os.getpid(), 'python': sys.version.split()[0],
                   'tiers': self.planned, 'packages': {}})
        self.told = {}
        self.tell()
        while not self.closing:
            if self.frames:
                self.send(self.run(self.frames.pop(0)))
            else:
                self.pump(-1)
        sweep(self.children, self.keep)
        remove_tree(WORKDIR)

    def tier_for(self, frame):
        """The job's zygote, once it has a spare child; a cheaper one when the job's tier died; None when the job's
        `wait_ms` (what is left of its queue timeout) ran out while its tier warmed."""
        while True:
            z = self.zygotes[pick_tier(frame.get('code', ''), {n for n, z in self.zygotes.items() if not z.dead}, self.loaded)]
            if not z.warm and not z.dead:  # the runner allows a job that waits for a warming tier more time
                self.send({'op': 'waiting', 'id': frame.get('id'), 'tier': z.name})
                t0 = time.perf_counter()
                limit = frame.get('wait_ms')
                end = t0 + limit / 1000 if isinstance(limit, (int, float)) else None
                while not z.ready and not z.dead and not self.closing:
                    if end is None: self.pump(-1); continue
                    left = end - time.perf_counter()
                    if left <= 0: return None
                    self.pump(max(1, int(left * 1000)))
                frame['waited_ms'] = (time.perf_counter() - t0) * 1000
            while not z.ready and not z.dead and not self.closing: self.pump(-1)
            if not z.dead or z.name == 'bare': return z

    def run(self, job):
        payload = None
        for _ in range(3):  # an earlier job may have killed the spare job process: take the next one
            z = self.tier_for(job)
            if z is None:
                result = failed(job, 'queue_timeout', 'TierWarming', 'the tier this job needs was still warming when its queue timeout ran out (%d ms)' % job['wait_ms'], retire=False)
                result['waited_ms'] = job['wait_ms']
                return result
            if z.dead or self.closing or z.spare is None:
                return failed(job, 'killed', 'ZygoteExited', 'the %s zygote is gone' % z.name)
            pid, (job_w, out_r, err_r, rep_r) = z.spare
            z.spare = None
            z.ready = False
            t0 = time.perf_counter()
            z.ask()  # the next job process is forked while this job runs
            try:
                if tampered(pid):  # reniced, limited, pinned by a job that ran while it waited
                    os.kill(pid, signal.SIGKILL)
                    for fd in (job_w, out_r, err_r, rep_r): os.close(fd)
                    return failed(job, 'infra_error', 'SandboxTampered', 'an earlier job changed the limits of this sandbox\'s processes; the sandbox is replaced')
                if signalled(pid):  # an earlier job signalled it, and the signal waits (a stopped process keeps it): it would end this job
                    os.kill(pid, signal.SIGKILL)
                    raise OSError('a signal is pending for the spare job process')
                if payload is None: payload = marshal.dumps((job.get('code', ''), precompile(job.get('code', '')), (job.get('stdin') or '').encode(), job.get('files') or {}))
                self.limit(z, pid, job)
                os.kill(pid, signal.SIGCONT)  # or a job stopped it
                os.write(job_w, payload)  # the job process reads it all before it writes anything
                break
            except OSError:
                for fd in (job_w, out_r, err_r, rep_r): os.close(fd)
        else:
            return failed(job, 'killed', 'SpareExited', 'the job process was killed before its job came')
        cap = int(job.get('max_output_bytes') or 65536)
        os.close(job_w)
        bufs = {out_r: bytearray(), err_r: bytearray(), rep_r: bytearray()}
        trunc = {out_r: False, err_r: False, rep_r: False}
        deadline = t0 + timeout_ms_of(job) / 1000
        # The pipes are watched only once the job has run PATIENCE_S: most jobs end sooner, their output waiting in the
        # pipes, and the controller wakes once, for the zygote's report of the exit, not also for each write.
        watch_from = t0 + PATIENCE_S
        watching = timed_out = killed = False

        def drain(fd):
            """Reads what is there; False at EOF, None when nothing is."""
            try: data = os.read(fd, 65536)
            except BlockingIOError: return None
            if not data:
                open_fds.discard(fd)
                if watching: self.poller.unregister(fd)
                return False
            room = cap - len(bufs[fd])
            if len(data) > room: trunc[fd] = True; data = data[:max(room, 0)]
            bufs[fd] += data
            return True
        open_fds = set(bufs)
        while pid not in z.exits and not z.dead:
            now = time.perf_counter()
            left = deadline - now
            if (left <= 0 or self.closing) and not killed:
                if not self.closing and not timed_out:  # the deadline: SIGTERM first (its handler flushes the output)
                    timed_out = True
                    try: os.killpg(pid, signal.SIGTERM)
                    except OSError: pass
                    deadline = now + FLUSH_GRACE_S
                    continue
                killed = True
                try: os.killpg(pid, signal.SIGKILL)
                except OSError: pass
                deadline = time.perf_counter() + 1  # the zygote reports the exit; past this, give up on it
            elif left <= 0: break
            if not watching and now >= watch_from:
                watching = True
                for fd in open_fds: self.poller.register(fd, select.POLLIN)
            wait = left if watching else min(left, watch_from - now)
            for fd, _ in self.pump(int(max(wait, 0) * 1000) + 1):
                if fd in open_fds: drain(fd)
        duration = (time.perf_counter() - t0) * 1000
        wstatus = z.exits.pop(pid, None)
        leftover = sweep(self.children, self.keep)
        for other in self.zygotes.values():  # a job may have stopped a zygote: nothing of the job is left to do it again
            if not other.dead:
                try: os.kill(other.pid, signal.SIGCONT)
                except OSError: pass
                other.ask()  # when its fork failed during the job (the sandbox's process limit)
        if controller_tampered(): leftover = False  # the job reniced or prlimited the controller: retire
        for fd in list(open_fds):
            while drain(fd): pass  # every writer is dead or dying: EOF, or nothing more will come
            if fd in open_fds and watching: self.poller.unregister(fd)
        for fd in bufs: os.close(fd)
        files = fetch_files(WORKDIR, job.get('fetch_files')) if wstatus is not None else {}
        cleaned = self.cleanup.clean()
        try: report = json.loads(bufs[rep_r]) if bufs[rep_r] else None
        except ValueError: report = None
        if not isinstance(report, dict): report = None
        exit_code, error, retire = None, None, not leftover or not cleaned or wstatus is None
        if timed_out:
            status, retire = 'timeout', True
            error = {'type': 'Timeout', 'message': 'the run exceeded timeout_ms=%s' % job.get('timeout_ms')}
        elif wstatus is None:
            status, error = 'killed', {'type': 'ZygoteExited', 'message': 'the %s zygote is gone' % z.name}
        elif os.WIFEXITED(wstatus):
            exit_code = os.WEXITSTATUS(wstatus)
            status = 'ok' if exit_code == 0 else 'error'
            if exit_code and report:  # written by the job process: anything a job wrote to fd 3 may be here
                error = {'type': str(report.get('type', 'ExitCode'))[:256], 'message': str(report.get('message', 'exited with code %d' % exit_code))[:8192]}
                if 'traceback' in report: error['traceback'] = str(report['traceback'])[-8192:]
                if report.get('memory') is True: status, retire = 'memory', True
            elif exit_code:
                error = {'type': 'ExitCode', 'message': 'exited with code %d' % exit_code}
        else:
            sig = os.WTERMSIG(wstatus)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            status = 'timeout' if sig == signal.SIGXCPU else 'killed'
            error = {'type': name, 'message': 'killed by signal %d (%s)' % (sig, name)}
            ooms = oom_kills() if sig == signal.SIGKILL and self.ooms is not None else None
            if ooms is not None and ooms > self.ooms:
                # The sandbox's memory cgroup ran out and the kernel killed the job (its oom_score_adj is 1000).
                self.ooms, status, retire = ooms, 'memory', True
                error = {'type': 'MemoryError', 'message': 'the sandbox ran out of memory: the kernel killed the job (cgroup OOM)'}
        result = {'op': 'result', 'id': job.get('id'), 'status': status, 'exit_code': exit_code,
                  'stdout': bufs[out_r].decode('utf-8', 'replace'), 'stderr': bufs[err_r].decode('utf-8', 'replace'),
                  'duration_ms': duration, 'truncated': {'stdout': trunc[out_r], 'stderr': trunc[err_r]},
                  'error': error, 'files': files, 'retire': retire or z.dead, 'tier': z.name}
        if 'waited_ms' in job: result['waited_ms'] = job['waited_ms']
        return result

    def limit(self, z, pid, job):
        """Sets the job's own limits on spare `pid` of zygote `z`, from here (prlimit): address space (its size plus
        memory_mb), CPU time (a backstop past timeout_ms) and, where configured, processes."""
        mem = address_space(int(os.pread(z.statm, 256, 0).split()[0]), job)  # the zygote's size: the spare's, forked from it
        resource.prlimit(pid, resource.RLIMIT_AS, (mem, mem))
        cpu = timeout_ms_of(job) // 1000 + 2
        resource.prlimit(pid, resource.RLIMIT_CPU, (cpu, cpu + 1))
        if NPROC: resource.prlimit(pid, resource.RLIMIT_NPROC, (NPROC, NPROC))


def precompile(code):
    """The job's code compiled here, or None when it does not compile (the job then raises the error itself). Compiling
    in a fresh fork costs copy-on-write faults; here, where the compiler's pages are already private, a fraction of
    that; the code object travels to the job process marshalled."""
    try: return compile(code, MAIN_FILE, 'exec', dont_inherit=True)
    except BaseException: return None


def failed(job, status, type_, message, retire=True):
    return {'op': 'result', 'id': job.get('id'), 'status': status, 'exit_code': None, 'stdout': '', 'stderr': '',
            'duration_ms': 0, 'truncated': {'stdout': False, 'stderr': False}, 'error': {'type': type_, 'message': message},
            'files': {}, 'retire': retire, 'tier': None}


def main():
    if os.environ.get('SANDFLEET_SECCOMP'): add_seccomp(base64.b64decode(os.environ.pop('SANDFLEET_SECCOMP')))
    prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: what a job leaves behind is reparented to us
    prctl(4, 0)   # PR_SET_DUMPABLE 0: job processes (same uid) cannot ptrace the controller or the zygotes
    for k in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ[k] = '1'
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
