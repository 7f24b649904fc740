/**
 * What a job leaves in its process (threads, children, descriptors, handlers, timers, environment, umask): the check
 * finds it, or the job ends as a forked one.
 */
import { retired, type ContaminationCase } from '../types.ts'

export const PROCESS: ContaminationCase[] = [
  retired(
    'a thread left running',
    'import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\nprint("started")',
    'taint'
  ),
  retired('a child process left', 'import subprocess\nsubprocess.Popen(["sleep", "30"])\nprint("spawned")', 'taint'),
  retired('a descriptor left open', 'import os\nos.open("/dev/null", os.O_RDONLY)\nprint("fd")', 'descriptors'),
  retired(
    'a signal handler',
    'import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)\nprint("handler")',
    'signal'
  ),
  retired('an alarm', 'import signal\nsignal.alarm(30)\nprint("alarm")', 'signal'),
  retired('an environment variable', 'import os\nos.environ["CONTAMINATION"] = "1"\nprint("env")', 'taint'),
  retired('the umask', 'import os\nos.umask(0)\nprint("umask")', 'umask')
]
