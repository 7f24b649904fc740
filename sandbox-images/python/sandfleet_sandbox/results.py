"""The result frames the controller answers jobs with: one of a job that did not run (`failed`; `refused`, a frame
refused at its parse), and the status, exit code and error of one that did, from what the controller saw of its end
(`ending`)."""
import os
import signal


def failed(job_id, status, type_, message, retire_reason=None):
    """The result of job `job_id` that did not run; `retire_reason`: why the sandbox must be replaced, None when it
    need not."""
    result = {
        'op': 'result',
        'id': job_id,
        'status': status,
        'exit_code': None,
        'stdout': '',
        'stderr': '',
        'duration_ms': 0,
        'truncated': {'stdout': False, 'stderr': False},
        'error': {'type': type_, 'message': message},
        'files': {},
        'retire': retire_reason is not None,
        'tier': None,
    }
    if retire_reason is not None:
        result['retire_reason'] = retire_reason
    return result


def refused(error):
    """The answer to a frame refused at its parse (a frames.FrameError that names its job: the runner's fault; nothing
    ran)."""
    return failed(error.frame_id, 'infra_error', 'BadFrame', 'the executor refused the job\'s frame: %s' % error)


def ending(timeout_ms, tier, timed_out, wstatus, done, report, oom_killed):
    """(status, exit_code, error, out_of_memory) of a job of `timeout_ms` that ran: `timed_out` by the controller;
    `wstatus` its process's wait status as its zygote reported it, or `done` the end a reuse process reported (None
    both: its zygote is gone); `report` its error report (anything a job wrote to fd 3 may be there); `oom_killed()`
    whether the sandbox's memory cgroup killed a process since it was last asked. `out_of_memory`: its heap ran out (a
    reuse process is then dropped).
    """
    if timed_out:
        return (
            'timeout',
            None,
            {'type': 'Timeout', 'message': 'the run exceeded timeout_ms=%s' % timeout_ms},
            False,
        )
    if wstatus is None and done is None:
        return 'killed', None, {'type': 'ZygoteExited', 'message': 'the %s zygote is gone' % tier}, False
    if done is not None or os.WIFEXITED(wstatus):
        exit_code = int(done['status']) if done is not None else os.WEXITSTATUS(wstatus)
        status, error, memory = 'ok' if exit_code == 0 else 'error', None, False
        if exit_code and report:
            error = {
                'type': str(report.get('type', 'ExitCode'))[:256],
                'message': str(report.get('message', 'exited with code %d' % exit_code))[:8192],
            }
            if 'traceback' in report:
                error['traceback'] = str(report['traceback'])[-8192:]
            if report.get('memory') is True:
                status, memory = 'memory', True
        elif exit_code:
            error = {'type': 'ExitCode', 'message': 'exited with code %d' % exit_code}
        return status, exit_code, error, memory
    sig = os.WTERMSIG(wstatus)
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
    if sig == signal.SIGKILL and oom_killed():  # the kernel killed the job (its oom_score_adj is 1000)
        return (
            'memory',
            None,
            {'type': 'MemoryError', 'message': 'the sandbox ran out of memory: the kernel killed the job (cgroup OOM)'},
            False,
        )
    return (
        'timeout' if sig == signal.SIGXCPU else 'killed',
        None,
        {'type': name, 'message': 'killed by signal %d (%s)' % (sig, name)},
        False,
    )
