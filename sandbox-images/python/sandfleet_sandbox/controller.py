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
The controller's parts: the runner's channel (runner_channel.py: frames in, parsed once into
their types by frames.py and judge_frames.py, and out), where a job runs (placement.py), its reuse
processes (reuse_keeper.py), one run from its watch to its result (job_run.py), a judge's runs from its
frame to its result (judge_run.py); this module holds them together: the one poll, the zygotes,
each frame's handler.
"""
import base64
import os
import select
import sys

from .libc import prctl
from .frames import ExecJob, FrameError
from .judge_frames import JudgeJob
from .seccomp import add_seccomp
from .job_process import SCRATCH, WORKDIR
from .tiers import plan_tiers
from .reuse_process import TAGS_WORK
from .reuse_handle import ReuseHandle
from .zygote_handle import Zygote
from .cleanup import Cleanup, Leftovers, remove_tree
from .results import failed, refused
from .runner_channel import RunnerChannel
from .job_run import OomCount
from .placement import Placement
from .reuse_keeper import ReuseKeeper
from .judge_run import Judge
from .sandbox_env import SANDBOX_ENV


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


class Controller:
    """The executor's controller: the runner's `channel`, the `zygotes` (tier name → zygote_handle.Zygote), its one poll
    (`pump`), and for each kind of frame its handler (`handlers`: the frame's type → the method that answers it with a
    result frame: an `exec` job, a judge, a frame refused at its parse). A new kind of job: its frozen type and its
    parser (runner_channel.PARSERS), its handler here; its runs, as a judge's are, through run_job (placement, then
    job_run's Run)."""

    def __init__(self):
        self.channel = RunnerChannel()
        cleanup = Cleanup(WORKDIR, SCRATCH)
        self.ooms = OomCount()
        # what every tier has: the executor's own imports (a job importing only those runs on bare)
        self.loaded = frozenset(m.split('.')[0] for m in sys.modules)
        # bare first: forked before anything else is imported or allocated here (each page it holds is copied at each
        # fork)
        self.zygotes = {'bare': Zygote('bare', [])}
        self.planned = plan_tiers()
        for name in self.planned:
            if name not in self.zygotes:
                self.zygotes[name] = Zygote(name, list(self.zygotes.values()))
        self.dead = []  # zygotes that died and are not reaped yet
        self.told = None  # after `ready`: each tier's state the runner was told (tell)
        self.leftovers = Leftovers(cleanup, {z.pid for z in self.zygotes.values()})
        # fd → what the poll wakes for: a zygote's socket, a reuse process's report pipe (the channel's is its own)
        self.by_fd = {z.sock.fileno(): z for z in self.zygotes.values()}
        self.poller = select.poll()
        self.poller.register(self.channel.fd_in, select.POLLIN)
        for fd in self.by_fd:
            self.poller.register(fd, select.POLLIN)
        self.keeper = ReuseKeeper(self.zygotes, self.channel, self.pump, self.poller, self.by_fd, self.leftovers)
        self.placement = Placement(self.zygotes, self.loaded, self.channel, self.pump, self.poller, self.keeper)
        self.handlers = {ExecJob: self.run_exec, JudgeJob: self.run_judge, FrameError: refused}
        self.channel.allocate()

    def pump(self, timeout_ms):
        """One poll round: zygote messages, reuse processes' reports and channel input. Returns the fds that were
        readable."""
        events = self.poller.poll(timeout_ms)
        for fd, _ in events:
            z = self.by_fd.get(fd)
            if isinstance(z, ReuseHandle):
                if not z.read():
                    self.poller.unregister(fd)
                    del self.by_fd[fd]
            elif z is not None:
                kind = z.on_message()
                if kind is None:
                    self.poller.unregister(fd)
                    del self.by_fd[fd]
                    self.dead.append(z.pid)  # reaped once it has exited
                    self.channel.log('error', 'zygote %s exited' % z.name)
                if kind is None or kind == b'r':
                    self.tell()
            elif fd == self.channel.fd_in:
                if not self.channel.read():
                    self.poller.unregister(fd)
        self.settle()
        return events

    def settle(self):
        """Reaps the zygotes that died (an OOM kill, a job's kill); the reuse processes settled (ReuseKeeper.settle)."""
        for pid in list(self.dead):
            try:
                reaped = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                reaped = True
            if reaped:
                self.dead.remove(pid)
        self.keeper.settle()

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
                self.channel.send({'op': 'tier', 'name': z.name, 'ready': not z.dead, 'ms': z.ms, 'modules': z.modules})

    def serve(self):
        bare = self.zygotes['bare']
        while not bare.ready and not bare.dead:
            self.pump(-1)
        if bare.dead:
            sys.exit(1)
        self.channel.send(
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
        channel, keeper, handlers = self.channel, self.keeper, self.handlers
        while not channel.closing:
            if channel.jobs:
                job = channel.jobs.pop(0)
                channel.send(handlers[type(job)](job))
                if keeper.answered is not None:
                    keeper.clean_after()
                self.settle()  # a reuse process whose verdict came with its job's end
            else:
                self.pump(-1)
        self.leftovers.sweep_all()
        remove_tree(WORKDIR)

    def run_exec(self, job):
        """Runs an `exec` job (a frames.ExecJob) and answers its result frame."""
        result, _ = self.run_job(job)
        return result

    def run_judge(self, job):
        """Judges a `judge` job (a JudgeJob) and answers its result frame, its `compiled` and `tested` frames
        sent as its steps end (judge_run.py)."""
        return Judge(job, self.channel, self.pump, self.run_step).run()

    def run_step(self, step):
        """One step of a judge (a JudgeStep) run as an `exec` job is, then put behind as between two jobs (a
        reuse process's verdict awaited, the dirs cleaned): (its result frame, its job process's report)."""
        answer = self.run_job(step)
        if self.keeper.answered is not None:
            self.keeper.clean_after()
        self.settle()
        return answer

    def run_job(self, job):
        """Runs a job (a frames.ExecJob or JudgeStep) on its tier's reuse process when it asks for `reuse` and one is
        idle and may take this code, else on the tier's spare, forked for it: (its result frame, the report its job
        process wrote: a dict, or None)."""
        if self.leftovers.broken is not None:
            reason = self.leftovers.broken + '; the sandbox is replaced'
            return failed(job.id, 'infra_error', 'SandboxTampered', reason, 'cleanup'), None
        self.keeper.check_idle(job.tenant)
        alive = [z for z in self.zygotes.values() if not z.dead]  # one that dies while the job runs retires the sandbox
        run = self.placement.take_process(job)
        if type(run) is dict:
            return run, None  # the job did not run: its result
        run.watch(self.pump, self.poller, self.channel)
        r = run.reuser
        if r is not None and r.violation is not None:
            run.capture.unwatch()
            return self.keeper.violated(run, alive), None
        run.after(self.leftovers, self.keeper, alive)
        return run.result(self.ooms.killed), run.report


def main():
    if os.environ.get(SANDBOX_ENV['seccomp']):
        add_seccomp(base64.b64decode(os.environ.pop(SANDBOX_ENV['seccomp'])))
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
