"""Where a job runs: its tier (the cheapest that has what it imports; one still warming waited for, at most the job's
`wait_ms`), then its tier's reuse process when the job may run there and the process takes it (reuse_keeper.py), else
the tier's spare, checked and limited from outside before its job is written to it. The answer is a `Run` (job_run.py),
or the result of a job that cannot run."""
import marshal
import os
import resource
import select
import signal
import time

from .limits import NPROC, address_space, cpu_backstop_s
from .judge_frames import JudgeStep
from .tamper_checks import signalled, tampered
from .job_process import MAIN_FILE
from .tiers import pick_tier
from .results import failed
from .runner_channel import BIG_BUFFER, PIPE_BYTES, grow_pipe
from .job_run import Run

# How long a spare may take to read a job larger than its pipe holds (it reads at once, as fast as it is written; one
# that took this long is stuck, and the next spare takes the job).
HAND_OVER_WAIT_S = 30.0


def precompile(code):
    """The job's code compiled here, or None when it does not compile (the job then raises the error itself). Compiling
    in a fresh fork costs copy-on-write faults; here, where the compiler's pages are already private, a fraction of
    that; the code object travels to the job process marshalled."""
    try:
        return compile(code, MAIN_FILE, 'exec', dont_inherit=True)
    except BaseException:
        return None


def job_bytes(job, nonce, wait_files=False):
    """A job (an ExecJob, or a judge's JudgeStep) as its job process reads it from its pipe (job_process.read_job): the
    length of what follows, marshalled: the code, its code object (an ExecJob's compiled here: a fresh fork paid ~1 ms
    of copy-on-write faults in compile(); a JudgeStep's compiled once by its judge), the length of stdin, files, for a
    reuse process the job's nonce and whether it waits, after the job, until the controller has read the files it asked
    for back, and its kind (None: its code runs; a JudgeStep's (name, spec): job_process.KINDS); then stdin itself (not
    marshalled: megabytes would be copied twice more, here and in the job process)."""
    stdin = job.stdin.encode()
    if type(job) is JudgeStep:
        compiled = job.compiled
        kind = job.kind
    else:
        compiled = precompile(job.code)
        kind = None
    payload = marshal.dumps((job.code, compiled, len(stdin), dict(job.files), nonce, wait_files, kind))
    return len(payload).to_bytes(8, 'little') + payload + stdin


def job_size(job):
    """About the bytes of a job's hand-over to its process: its code, stdin and files as its frame carries them."""
    return len(job.code) + len(job.stdin) + sum(map(len, job.files.values()))


class Placement:
    """Chooses each job's process and hands the job to it. `zygotes` (tier name → zygote_handle.Zygote), `loaded` (the
    top-level modules every tier has), the runner's `channel`, the controller's `pump` and `poller`, and `keeper` (the
    ReuseKeeper, which answers for the reuse processes)."""

    def __init__(self, zygotes, loaded, channel, pump, poller, keeper):
        self.zygotes, self.loaded, self.channel = zygotes, loaded, channel
        self.pump, self.poller, self.keeper = pump, poller, keeper

    def tier_for(self, job):
        """(zygote, waited_ms): the job's zygote, once it has a spare child, a cheaper one when the job's tier died,
        and how long the job waited for it to warm (None: it did not); the zygote None when the job's `wait_ms` (what
        is left of its queue timeout) ran out while its tier warmed."""
        waited_ms = None
        channel = self.channel
        while True:
            z = self.zygotes[pick_tier(job.code, {n for n, z in self.zygotes.items() if not z.dead}, self.loaded)]
            if not z.warm and not z.dead:  # the runner allows a job that waits for a warming tier more time
                channel.send({'op': 'waiting', 'id': job.id, 'tier': z.name})
                t0 = time.perf_counter()
                end = None if job.wait_ms is None else t0 + job.wait_ms / 1000
                while not z.ready and not z.dead and not channel.closing:
                    if end is None:
                        self.pump(-1)
                        continue
                    left = end - time.perf_counter()
                    if left <= 0:
                        return None, job.wait_ms
                    self.pump(max(1, int(left * 1000)))
                waited_ms = (time.perf_counter() - t0) * 1000
            while not z.ready and not z.dead and not channel.closing:
                self.pump(-1)
            if not z.dead or z.name == 'bare':
                return z, waited_ms

    def take_process(self, job):
        """The process the job runs in, its job handed to it (a `Run`): its tier's reuse process when the job may run
        there and it takes the job, else the tier's spare; or the result of a job that cannot run (its tier still
        warming at the end of its wait, the zygote gone, the spare changed by an earlier job, three spares gone)."""
        reuse = job.isolation == 'reuse'
        refused = self.keeper.refusal(job)
        for _ in range(3):  # an earlier job may have killed the spare job process: take the next one
            z, waited_ms = self.tier_for(job)
            if z is None:
                result = failed(
                    job.id,
                    'queue_timeout',
                    'TierWarming',
                    'the tier this job needs was still warming when its queue timeout ran out (%d ms)' % job.wait_ms,
                )
                result['waited_ms'] = waited_ms
                return result
            run = None
            if reuse and refused is None:
                r, refused = self.keeper.take(z, job)
                if r is not None:
                    self.keeper.running = r  # its own, until its job is answered: settle leaves it to this
                    run = Run(job, z, r.pid, (r.job_w, r.out_r, r.err_r, r.rep_r), r, refused, waited_ms)
            if run is None:
                if z.dead or self.channel.closing or z.spare is None:
                    return failed(job.id, 'killed', 'ZygoteExited', 'the %s zygote is gone' % z.name, 'zygote')
                if reuse:
                    z.ask_reuse()  # for the next reuse job of this tier
                run = self.take_spare(z, job, refused, waited_ms)
                if run is None:
                    continue
                if isinstance(run, dict):
                    return run
            # A job larger than a pipe holds took a while to reach its process: the runner's hard deadline counts from
            # here, as the job's own does (Run.t0).
            if job_size(job) > PIPE_BYTES:
                self.channel.send({'op': 'started', 'id': job.id})
            return run
        return failed(job.id, 'killed', 'SpareExited', 'the job process was killed before its job came', 'zygote')

    def take_spare(self, z, job, refused, waited_ms):
        """Tier `z`'s spare with the job written to it (a `Run`); the result of a job that cannot run when an earlier
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
                    job.id,
                    'infra_error',
                    'SandboxTampered',
                    'an earlier job changed the limits of this sandbox\'s processes; the sandbox is replaced',
                    'tampered',
                )
            if signalled(pid):
                # an earlier job signalled it, and the signal waits (a stopped process keeps it): it would end this job
                os.kill(pid, signal.SIGKILL)
                raise OSError('a signal is pending for the spare job process')
            self.limit(z, pid, job)
            os.kill(pid, signal.SIGCONT)  # or a job stopped it
            self.hand_over(pid, fds[0], job_bytes(job, None))
            return Run(job, z, pid, fds, None, refused, waited_ms)  # its time runs from here
        except OSError:
            for fd in fds:
                os.close(fd)
            return None

    def hand_over(self, pid, job_w, data):
        """Writes job `data` to spare `pid`'s job pipe (the job process reads it all before it runs anything). What the
        pipe does not take at once goes as the process reads it, the controller pumping its channel and its zygotes
        meanwhile; raises OSError when the process is gone, or did not read it within HAND_OVER_WAIT_S (it is
        killed)."""
        if len(data) <= PIPE_BYTES:
            os.write(job_w, data)  # an empty pipe takes it whole
            return
        grow_pipe(job_w, BIG_BUFFER)
        os.set_blocking(job_w, False)
        view = memoryview(data)
        until = time.perf_counter() + HAND_OVER_WAIT_S
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

    @staticmethod
    def limit(z, pid, job):
        """Sets the job's own limits on spare `pid` of zygote `z`, from here (prlimit): address space (its size plus
        memory_mb), CPU time (a backstop past timeout_ms) and, where configured, processes."""
        # the zygote's size: the spare's, forked from it
        mem = address_space(int(os.pread(z.statm, 256, 0).split()[0]), job.memory_mb)
        resource.prlimit(pid, resource.RLIMIT_AS, (mem, mem))
        cpu = cpu_backstop_s(job.timeout_ms)
        resource.prlimit(pid, resource.RLIMIT_CPU, (cpu, cpu + 1))
        if NPROC:
            resource.prlimit(pid, resource.RLIMIT_NPROC, (NPROC, NPROC))
