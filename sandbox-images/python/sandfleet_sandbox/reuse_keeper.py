"""The controller's reuse processes, at most one a tier (its zygote's `reuser`, a reuse_handle.ReuseHandle): which may
take a job (idle, running nothing since its verdict, untouched from outside, its tenant's), its limits for the job and
the job handed to it; after the job, its verdict awaited and the dirs cleaned; one that broke the protocol, ran between
its jobs, was changed from outside or ran another tenant's jobs dropped, the runner told (`retired`). Why a process of
one tenant cannot reach the jobs of another: docs/reuse-trust.md."""
import os
import resource
import select
import time

from .limits import NPROC, address_space, cpu_backstop_s
from .tamper_checks import RLIMITS, SPARE_LIMITS, signalled, tampered
from .reuse_process import TAGS_WORK
from .reuse_denylist import static_taint
from .results import failed
from .runner_channel import BIG_BUFFER, PIPE_BYTES, grow_pipe
from .placement import HAND_OVER_WAIT_S, job_bytes

# How long a job waits for the verdict of its tier's reuse process before the process is retired as stuck.
CHECK_WAIT_S = 2.0
# How long a reuse process, let run, may leave a job larger than its pipe holds unread (its loop reads at once): each
# pipe-full of it (a job of megabytes, at most HAND_OVER_WAIT_S in all).
TAKE_WAIT_MS = 1000


class ReuseKeeper:
    """The reuse processes of `zygotes` (tier name → zygote_handle.Zygote) as the controller keeps them, with the
    runner's `channel` (told of each retirement), the controller's `pump`, `poller` and `by_fd` (fd → what the poll
    wakes for: each reuse process's report pipe is added there), and `leftovers` (cleanup.Leftovers). Its state:
    `running` (the
    reuse process running the job, if one is), `answered` ((zygote, process) of the job just answered: its dirs are
    cleaned after its verdict), `last_clean` (the process that ran the last job and passed its check since, if one
    did)."""

    def __init__(self, zygotes, channel, pump, poller, by_fd, leftovers):
        self.zygotes, self.channel, self.pump = zygotes, channel, pump
        self.poller, self.by_fd, self.leftovers = poller, by_fd, leftovers
        self.running = None
        self.answered = None
        self.last_clean = None

    @staticmethod
    def refusal(job):
        """Why a job that asks for `reuse` runs forked whatever its tier's reuse process (`unsupported`, `static`), None
        when it may run reused; None too for a job that asks for `fork`."""
        if job.isolation != 'reuse':
            return None
        if not TAGS_WORK:
            return 'unsupported'
        return 'static' if static_taint(job.code) else None

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

    def take(self, z, job):
        """Tier `z`'s reuse process with `job` handed to it (its limits set, let run, the job written) and None; or None
        and why not: none is idle (`warming`), it runs another tenant's jobs (`tenant`), or what the controller reads of
        it from outside says it ran, wrote or was changed since its last verdict (`tampered`). The job then runs
        forked."""
        r = self.idle_process(z)
        if r is None:
            return None, 'warming'
        if r.gone():  # killed while idle (a job of another tier can)
            self.drop(z, r, 'exit', 'the process ended between jobs')
            return None, 'warming'
        tenant = job.tenant
        if r.jobs > 0 and r.tenant != tenant:
            self.drop(z, r, 'tenant', 'it ran jobs of another tenant')
            z.ask_reuse()
            return None, 'tenant'
        # Before any of its code runs again: running nothing since its verdict (check_idle, a moment ago), silent and
        # alone; and, unless it ran the last job and passed its check since (no other job's code ran), its limits and
        # signals as they were. (The process that ran the last job and passed its check since has run nothing but its
        # own loop: it need not be found blocked first.)
        if (r is not self.last_clean and r.idle_cpu is None and not r.settled(full=False)) or not r.quiet():
            self.drop(z, r, 'tampered', r.violation or 'it ran, wrote or was not alone between its jobs')
            return None, 'tampered'
        if self.last_clean is not r and (tampered(r.pid, reused=True) or signalled(r.pid)):
            self.drop(z, r, 'tampered', 'an earlier job changed the limits or signals of this reuse process')
            return None, 'tampered'
        nonce = os.urandom(12).hex()
        try:
            r.cpu_at = r.cpu_seen = r.idle_cpu if r.idle_cpu is not None else r.cpu_ns()
            self.limit(r, job)
            r.thaw()
            data = job_bytes(job, nonce, wait_files=bool(job.fetch_files))
            if len(data) > PIPE_BYTES:
                grow_pipe(r.job_w, BIG_BUFFER)
            taken = r.send(data, min(job.timeout_ms, TAKE_WAIT_MS) / 1000, HAND_OVER_WAIT_S)
        except (OSError, ValueError):  # gone, or a limit it lowered cannot be raised
            self.drop(z, r, 'exit' if r.gone() else 'tampered', 'its limits cannot be set for its next job')
            return None, 'warming'
        if not taken:  # it did not read its job: what runs in it is not the reuse process's loop (the job runs forked)
            self.drop(z, r, 'violation', 'it did not read its job')
            return None, 'tampered'
        r.begin(nonce, tenant)
        return r, None

    @staticmethod
    def limit(r, job):
        """A reuse process's limits for its next job: the soft ones only (a hard limit lowered could not be raised for
        the next job), what the job may use past what the process holds: its size plus memory_mb, its CPU time so far
        plus the backstop. (Raising them is refused inside: reuse_process.Watch.)"""
        for limit, value in (
            (resource.RLIMIT_AS, address_space(r.pages(), job.memory_mb)),
            (resource.RLIMIT_CPU, r.cpu_seen // 10**9 + cpu_backstop_s(job.timeout_ms)),
        ):
            # as the zygote left it: the check, inside and from here, holds it
            hard = SPARE_LIMITS[RLIMITS.index(limit)][1]
            resource.prlimit(r.pid, limit, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))
        if NPROC and r.jobs == 0:
            resource.prlimit(r.pid, resource.RLIMIT_NPROC, (NPROC, NPROC))

    def job_ended(self, z, r, timed_out):
        """Reuse process `r` of tier `z` after its job: counted, when it reported the job's end; else dropped (it ended
        as a forked job ends: tainted, `timed_out`, crashed, os._exit)."""
        if r.done is None:
            what = 'timeout' if timed_out else 'taint' if r.tainted else 'exit'
            self.drop(z, r, what, r.tainted or 'the process ended with its job')
        else:
            r.since = time.perf_counter()
            r.jobs += 1

    def violated(self, run, alive):
        """The job's reuse process broke the protocol (a frame out of order or with another nonce, not alone at its
        end, its job never read): it is killed, what the job left is swept as after any job (`alive`: the zygotes live
        as it began), and the job answered infra_error: nothing the process said can be told from what a job wrote
        itself. A job it never took is answered as one an earlier job kept from running (SandboxTampered: the runner
        runs it elsewhere)."""
        z, r = run.z, run.reuser
        ran = not r.unread()
        what = r.violation
        r.kill()
        self.await_exit(z, r)
        self.drop(z, r, 'violation', what)
        self.running = None
        reason, _ = self.leftovers.after_job(alive, False)
        if not self.leftovers.dirs.clean():
            reason = reason or 'cleanup'
        self.last_clean = None
        if not ran:
            return failed(
                run.job.id,
                'infra_error',
                'SandboxTampered',
                'the reuse process given this job did not take it (an earlier job took it over); the job did not run',
                reason or 'tampered',
            )
        result = failed(
            run.job.id,
            'infra_error',
            'ReuseViolation',
            'the reuse process that ran this job broke the executor\'s protocol (%s): it was killed, '
            'and nothing it said answers the job' % what,
            reason,
        )
        result.update({'duration_ms': run.duration, 'tier': z.name, 'isolation': 'reuse'})
        return result

    def await_exit(self, z, r):
        """Pumps until zygote `z` reports the exit of reuse process `r` (killed, or retired by its check), at most a
        second."""
        until = time.perf_counter() + 1
        while r.pid not in z.exits and not z.dead and time.perf_counter() < until:
            self.pump(max(1, int((until - time.perf_counter()) * 1000)))

    def clean_after(self):
        """After a job answered from a reuse process: its verdict awaited (the process dropped the job's objects, whose
        finalizers may have written files), then the work dir and scratch dirs cleaned. What cannot be cleaned breaks
        the sandbox: every later job is answered infra_error, and the runner replaces it."""
        z, r = self.answered
        self.answered = None
        self.await_verdict(z, r)
        if r.state == 'gone' and z.reuser is r:
            # retired: it exits; the next job finds it reaped, as a forked job's process
            self.await_exit(z, r)
            self.settle()
        if not self.leftovers.dirs.clean(ipc=False):
            self.leftovers.broken = 'what a job left could not be removed'
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

    def idle_process(self, z):
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
        self.channel.send({'op': 'retired', 'tier': z.name, 'reason': what, 'detail': detail[:200], 'jobs': r.jobs})

    def settle(self):
        """After each poll round: the report pipe of each new reuse process watched; those gone (a failed check, an
        exit) dropped; the exits of those dropped before their exit came forgotten."""
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
                if isinstance(r.retire, list) and len(r.retire) == 2:
                    what, detail = r.retire
                else:
                    what, detail = 'check', str(r.retire)
                self.drop(z, r, str(what), str(detail))
            elif r.pid in z.exits:
                self.drop(z, r, 'exit', 'the process ended between jobs')
