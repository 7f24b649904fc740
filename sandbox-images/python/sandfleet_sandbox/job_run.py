"""One run of a job, from the moment its process has it to its result frame: its output read while it runs and its
deadline kept (`Run.watch`: the soft stop, then the kill), what it left swept and its files read back (`Run.after`),
its result (`Run.result`). The process is chosen and the job handed to it before (placement.py)."""
import json
import os
import signal
import time

from .limits import SOFT_STOP_S
from .files import fetch_files
from .job_process import PLACES, WORKDIR
from .capture import Capture
from .results import ending
from .sandbox_env import SANDBOX_KNOBS

# How long a job runs before the controller also watches its pipes (a full pipe blocks the job until then).
PATIENCE_S = float(os.environ.get(SANDBOX_KNOBS['pipe_patience_ms'], '20')) / 1000
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


class OomCount:
    """The sandbox's memory cgroup's OOM kills, as last seen."""

    def __init__(self):
        self.seen = oom_kills()

    def killed(self):
        """Whether the cgroup killed a process since the last time this was asked (never where no cgroup file is
        visible)."""
        ooms = oom_kills() if self.seen is not None else None
        if ooms is None or ooms <= self.seen:
            return False
        self.seen = ooms
        return True


class Run:
    """A job in the process it runs in, from when its job was handed to it: `job` (its frames.ExecJob), tier `z`, its
    pid and pipes (job, stdout, stderr, report: the controller's ends), `reuser` (its handle when it is a reuse
    process; None: a spare, forked for it), `refused` (why a job that asked for reuse runs forked, or None),
    `waited_ms` (how long it waited for its tier to warm; None: it did not); then what the controller saw of it."""

    def __init__(self, job, z, pid, fds, reuser, refused, waited_ms):
        self.job, self.z, self.pid, self.fds, self.reuser = job, z, pid, fds, reuser
        self.refused, self.waited_ms = refused, waited_ms
        self.t0 = time.perf_counter()  # the job's time runs from here
        self.capture = None  # its output (watch)
        self.duration = 0.0  # its run time in ms
        self.timed_out = False  # whether the controller stopped it at its deadline
        # after: the end a reuse process reported, the wait status of a forked one (None both: its zygote is gone), its
        # CPU time in ns (None: unknown), why the sandbox retires (None: it goes on), its error report, the files it
        # asked for back and why some were not
        self.done = None
        self.wstatus = None
        self.cpu_ns = None
        self.retire = None
        self.report = None
        self.files = {}
        self.fetch_errors = {}

    def watch(self, pump, poller, channel):
        """Reads the job's output while it runs (`pump`: the controller's poll round; `poller` its poll), until its
        process ends (a forked job), its reuse process reports its end or breaks the protocol, or its deadline: then
        the soft stop (SIGTERM to its process group), SOFT_STOP_S later SIGKILL; at once when the runner's `channel`
        is closing. Sets `capture`, `duration` and `timed_out`."""
        z, pid, r = self.z, self.pid, self.reuser
        _, out_r, err_r, rep_r = self.fds
        if r is None:
            os.close(self.fds[0])
        capture = self.capture = Capture(out_r, err_r, rep_r if r is None else None, self.job.max_output_bytes, poller)
        deadline = self.t0 + self.job.timeout_ms / 1000
        # The pipes are watched only once the job has run PATIENCE_S: most jobs end sooner, their output waiting in the
        # pipes, and the controller wakes once, for the zygote's report of the exit (or the reuse process's end of the
        # job, on its report pipe, always watched), not also for each write.
        watch_from = self.t0 + PATIENCE_S
        timed_out = False
        killed = False
        while pid not in z.exits and not z.dead and (r is None or (r.done is None and r.violation is None)):
            now = time.perf_counter()
            left = deadline - now
            if (left <= 0 or channel.closing) and not killed:
                if r is not None and not timed_out and r.unread():
                    r.violate('it did not take its job')  # the job never started: another sandbox runs it
                    break
                if not channel.closing and not timed_out:
                    # the deadline: the soft stop first (the executor's handler flushes what Python holds of the job's
                    # output; a handler of the job's own runs instead)
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
            for fd, _ in pump(int(max(wait, 0) * 1000) + 1):
                if fd in capture.open:
                    capture.drain(fd)
        self.duration = (time.perf_counter() - self.t0) * 1000
        self.timed_out = timed_out
        if r is not None and r.done is not None and r.violation is None and not r.alone():
            # a job that left a thread or child ends as a forked one: no D comes
            r.violate('not alone at its end: %s' % r.company())
        if r is not None and r.done is None and r.violation is None and r.unread():
            r.violate('it ended without taking its job')  # the job never started: another sandbox runs it

    def after(self, leftovers, keeper, alive):
        """After every job, a reuse process's clean end too (its word that it left nothing is no proof): what it left
        reparented to the controller is killed; after one that did not end cleanly in a reuse process the zygotes of
        `alive` get SIGCONT and their limits, scheduling and lives are read (`leftovers`: cleanup.Leftovers). Then its
        output read to its end, its process let go (reaped; or, a reuse process, dropped or kept for the next job:
        `keeper`, the ReuseKeeper), the files it asked for read back and the work dir cleaned (after a reuse process's
        verdict, when it goes on). Sets `done`, `wstatus`, `cpu_ns`, `retire`, `files`, `fetch_errors` and `report`."""
        z, pid, r, capture = self.z, self.pid, self.reuser, self.capture
        done = self.done = r.done if r is not None else None
        wstatus = self.wstatus = z.exits.get(pid) if done is None else None
        if r is not None:
            cpu_ns = (r.cpu_ns() if done is not None else r.cpu_seen) - r.cpu_at
        else:
            cpu_ns = z.cpu_us.pop(pid, 0) * 1000 if wstatus is not None else None
        reason, orphans_us = leftovers.after_job(alive, done is not None)
        if cpu_ns is not None:
            cpu_ns += orphans_us * 1000
        self.cpu_ns = cpu_ns
        keeper.last_clean = None
        capture.finish()
        if r is None:
            z.exits.pop(pid, None)
            capture.close()
        else:
            keeper.job_ended(z, r, self.timed_out)
        keeper.running = None
        wanted = self.job.fetch_files
        if wstatus is not None or done is not None:
            self.files, self.fetch_errors = fetch_files(WORKDIR, wanted, PLACES)
        else:
            self.fetch_errors = dict.fromkeys(wanted, 'not read: the zygote that ran the job is gone')
        if done is not None:
            # the reuse process goes on (it drops the job's objects, then checks): the dirs are cleaned after its
            # verdict
            if wanted:
                r.send(b'g', 0)
            keeper.answered = (z, r)
            cleaned = True
        else:
            cleaned = leftovers.dirs.clean()
        if r is not None:
            report = done['report'] if done is not None else r.error
        else:
            try:
                report = json.loads(capture.bufs[capture.rep_r]) if capture.bufs[capture.rep_r] else None
            except ValueError:
                report = None
        self.report = report if isinstance(report, dict) else None
        # The sandbox takes the next job unless something of this one could not be undone.
        if reason is None and not cleaned:
            reason = 'cleanup'
        if reason is None and (z.dead or (wstatus is None and done is None)):
            reason = 'zygote'
        self.retire = reason

    def result(self, oom_killed):
        """The result frame, once `after` filled the run in (`oom_killed()`: whether the sandbox's memory cgroup killed
        a process since it was last asked)."""
        z, r, capture = self.z, self.reuser, self.capture
        status, exit_code, error, out_of_memory = ending(
            self.job.timeout_ms, z.name, self.timed_out, self.wstatus, self.done, self.report, oom_killed
        )
        if out_of_memory and self.done is not None:
            r.drop_after = 'memory'  # its heap ran out: a fresh fork of its zygote takes over
        out, err = capture.out_r, capture.err_r
        result = {
            'op': 'result',
            'id': self.job.id,
            'status': status,
            'exit_code': exit_code,
            'stdout': capture.text(out),
            'stderr': capture.text(err),
            'duration_ms': self.duration,
            'truncated': {'stdout': capture.truncated[out], 'stderr': capture.truncated[err]},
            'error': error,
            'files': self.files,
            'retire': self.retire is not None,
            'tier': z.name,
            'isolation': 'reuse' if r is not None else 'fork',
        }
        if self.retire is not None:
            result['retire_reason'] = self.retire
        if self.cpu_ns is not None:
            result['cpu_ms'] = round(self.cpu_ns / 1e6, 3)
        if self.fetch_errors:
            result['fetch_errors'] = self.fetch_errors
        if self.refused is not None:
            result['reuse_refused'] = self.refused
        if self.waited_ms is not None:
            result['waited_ms'] = self.waited_ms
        return result
