/**
 * The probe: Python run on a sandbox after each hostile case (its zygotes each keep a spare job
 * process, and at the reuse level also a reuse process: `childrenPerZygote`). It prints one JSON line describing
 * the state a job finds: its files, environment, builtins, signal handlers, limits, scheduling,
 * stdin and the processes of its sandbox. The corpus takes it once on a fresh fleet, then after
 * every case: it must print the same line (a dirty sandbox prints another). What a backend lacks
 * (pyodide: /proc, resource) is reported as `n/a`, the same each time.
 */
export const probe = (childrenPerZygote: number): string => String.raw`import builtins, hashlib, json, os, signal, sys
def digest(x): return hashlib.sha256(repr(x).encode()).hexdigest()[:16]
def listing(d):
    found = []
    for root, dirs, files in os.walk(d):
        found += [os.path.join(root, n) for n in dirs + files]
    return sorted(found)
def processes():
    """Processes that are no part of a warm sandbox: the controller's ancestors, the controller, its zygotes and
    each zygote's one spare job process, and its reuse process at the reuse level (and this job). Also any stopped
    process or zombie, but a zygote's one stopped child at the reuse level: its reuse process, which the controller
    stops between its jobs."""
    stat = {}
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try: fields = open('/proc/%s/stat' % p).read().rsplit(')', 1)[1].split()
        except (OSError, IndexError): continue
        stat[int(p)] = (fields[0], int(fields[1]))
    me = os.getpid()
    zygote = stat[me][1]
    controller = stat[zygote][1]
    keep = {me, controller}
    p = controller
    while p in stat:
        keep.add(p)
        p = stat[p][1]
    zygotes = [p for p, (_, parent) in stat.items() if parent == controller and p != me]
    keep.update(zygotes)
    for z in zygotes:
        spares = [p for p, (_, parent) in stat.items() if parent == z and p != me]
        if len(spares) <= ${childrenPerZygote}: keep.update(spares)
    odd = sorted(state for p, (state, _) in stat.items() if p not in keep)
    idle = {min(kids) for kids in ([p for p, (s, parent) in stat.items() if parent == z and s == 'T'] for z in zygotes) if kids} if ${childrenPerZygote} > 1 else set()
    stopped = sorted(state for p, (state, _) in stat.items() if state in 'TtZX' and p not in idle)
    return {'zygotes': len(zygotes), 'strays': odd, 'stopped': stopped}
state = {}
def probe(name, what):
    try: state[name] = what()
    except Exception as e: state[name] = 'n/a %s' % type(e).__name__
probe('cwd', os.getcwd)
probe('work', lambda: listing('.'))
probe('tmp', lambda: listing('/tmp'))
probe('shm', lambda: listing('/dev/shm'))
probe('mnt', lambda: listing('/mnt'))
probe('root', lambda: sorted(os.listdir('/')))
probe('dev', lambda: sorted(os.listdir('/dev')))
probe('proc', lambda: sorted(p for p in os.listdir('/proc') if not p.isdigit()))
probe('env', lambda: digest(sorted((k, v) for k, v in os.environ.items() if k != 'HOSTNAME')))  # docker: the container's id
probe('builtins', lambda: digest(sorted((k, type(v).__name__) for k, v in vars(builtins).items())))
probe('modules', lambda: digest(sorted(sys.modules)))
probe('path', lambda: sys.path)
probe('signals', lambda: digest([(int(s), getattr(signal.getsignal(s), '__qualname__', str(signal.getsignal(s)))) for s in sorted(signal.valid_signals())]))
# RLIMIT_AS is the job's own, set for it from its zygote's size (which moves by a page as the zygote's heap grows); the
# controller holds it (and checks the spare's before the job: test/adversarial.test.ts).
probe('rlimits', lambda: digest([__import__('resource').getrlimit(getattr(__import__('resource'), n)) for n in sorted(dir(__import__('resource'))) if n.startswith('RLIMIT_') and n != 'RLIMIT_AS']))
probe('scheduling', lambda: [os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), sorted(os.sched_getaffinity(0))])
probe('umask', lambda: os.umask(0o22))
probe('stdin', lambda: sys.stdin.read())
probe('hashlib', lambda: hashlib.__file__)
probe('processes', processes)
print(json.dumps(state, sort_keys=True))
`
