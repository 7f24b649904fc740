"""The `reuse` isolation level: a job process that takes another job only when a check proves the last one left no
trace.

A reuse process is forked by its zygote like a spare, and runs one job after another. Its Baseline is everything a job
could change: the interpreter's part (its settings, `sys.modules`, and the state reachable from every module within two
steps: the dicts of modules, classes, functions and objects by their version tags, lists and sets by the identity of
their items, locks and counters), taken once by the zygote and shared by every reuse process it forks, and the
process's part (threads, children, descriptors, umask, rlimits, scheduling, signal handlers, mask, timers, process
group), taken by each. After a job the process drops the job's objects, puts back what the job owns by design (the
caches of RESET_DICTS, the counters of RESET_ATTRS, the warning filters, the random generators, lists that only grew)
and checks the rest against the baseline: the first difference retires the process. What the check cannot see never
reaches it: code that names it (`static_taint`, reuse_denylist.py; also applied to code compiled while a job runs)
runs forked, and a call that reaches it while a job runs (TAINTS, seen by an audit hook no job can remove) makes the
process end after that job as a forked one does: threads joined, atexit handlers run, exit. The controller checks from
outside what a job in another process could do to it (rlimits, scheduling, pending signals), and holds what the process
says to what it reads of it (reuse_handle.py). This module is the reuse process's own code; the controller runs none of
it but `tags_work`.
"""
import _functools
import _locale
import _signal
import _thread
import collections
import contextvars
import ctypes
import gc
import itertools
import operator
import os
import resource
import sys
import types

from .limits import JOB_PRIORITY, NPROC, PAGE
from .tamper_checks import PER_JOB_RLIMITS, RLIMITS, threads
from .reuse_c_state import c_state
from .reuse_denylist import assigns_attributes, static_taint
from .job_process import (
    _exit,
    _dumps,
    _write,
    end_as_script,
    flush_std,
    handle_sigterm,
    fresh_main,
    fresh_stdin,
    read_exactly,
    read_job,
    run_job,
    run_kind,
)

# Audit events that mean a job reached what the check cannot see, or that it ends as only a fork can (a thread or a
# child to join at its end): the process then ends after the job, as a forked one does. An attribute set or deleted
# where the dicts' tags do not see it (a function's code or defaults, a class's name or bases, an object's class) taints
# when its object is one the baseline watches; libraries do it to the objects they make for a job (namedtuple,
# dataclasses). Frames, code objects and functions built from them reach a job only through names static_taint refuses
# (a library builds them for its own ends: sympy's lambdify).
TAINTS = frozenset(
    (
        'sys._current_frames',
        'sys.settrace',
        'sys.setprofile',
        'sys.addaudithook',
        'gc.get_objects',
        'gc.get_referrers',
        'gc.get_referents',
        'gc.freeze',
        'gc.unfreeze',
        'os.putenv',
        'os.unsetenv',
        'os.fork',
        'os.forkpty',
        'os.system',
        'os.exec',
        'os.posix_spawn',
        'os.spawn',
        'subprocess.Popen',
        '_thread.start_new_thread',
        'pickle.find_class',
        'mmap.__new__',
        'sys.set_asyncgen_hook_firstiter',
        'sys.set_asyncgen_hook_finalizer',
        'os.register_at_fork',
        'signal.pthread_kill',
        'resource.setrlimit',
        'resource.prlimit',
        'os.kill',
        'os.killpg',
    )
)
TAINT_PREFIXES = ('ctypes.', 'fcntl.', 'socket.')

# Caches a job changes by using a module as intended: put back after each job as they were (a forked job finds its
# zygote's). A job reaches them to poison them only through a private name or `linecache`'s API, and the reset undoes
# it.
RESET_DICTS = (
    ('linecache', 'cache'),
    ('re', '_cache'),
    ('warnings', 'onceregistry'),
    ('sympy.polys.rings', '_ring_cache'),
    ('sympy.polys.fields', '_field_cache'),
    ('typing', '_caches'),
)
# Counters a job moves by making objects, set back after each job: (module, class or None for the module's own, name).
RESET_ATTRS = (
    ('sympy.core.symbol', 'Dummy', '_count'),
    ('sympy.utilities.lambdify', None, '_lambdify_generated_counter'),
)

MAX_JOBS = 5000  # a process retires after this many jobs (fragmentation; caches that only grow)
MAX_GROWTH = 96 << 20  # or once it holds this much more memory than at its baseline
_MISSING = object()
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None))
# PyDictObject: PyObject_HEAD, ma_used, then ma_version_tag, which every change of a dict moves (CPython 3.6-3.12;
# checked at start by tags_work, and the level is not offered where it does not hold).
_TAG_OFFSET = 2 * ctypes.sizeof(ctypes.c_void_p) + ctypes.sizeof(ctypes.c_ssize_t)
_COUNT = type(itertools.count())
_LOCKS = (type(_thread.allocate_lock()), type(_thread.RLock()))
_BOUND = (types.BuiltinMethodType, type(_COUNT().__next__))
_LRU = _functools._lru_cache_wrapper
_chain, _is_not = itertools.chain.from_iterable, operator.is_not
SIGNALS = tuple(s for s in range(1, _signal.NSIG) if not 32 <= s < _signal.SIGRTMIN)  # the C library's own aside
ITIMERS = (_signal.ITIMER_REAL, _signal.ITIMER_VIRTUAL, _signal.ITIMER_PROF)


def tag_reader(d):
    """A live view of dict `d`'s version tag."""
    return ctypes.c_uint64.from_address(id(d) + _TAG_OFFSET)


_VALUE = operator.attrgetter('value')
_RAW = operator.attrgetter('raw')
# PyListObject: PyObject_VAR_HEAD (its size last), then ob_item, the array of its items' addresses.
_ITEMS_OFFSET = 3 * ctypes.sizeof(ctypes.c_void_p)


class ListWatch:
    """Lists by the identity of their items. Fast: a list holds what it held when it is as long, its item array is where
    it was and holds the same addresses (read in one copy per list, only once the first two hold). Else (an array that
    moved: a list put back by slice, grown and shrunk), item by item, and the array followed where it went."""

    def __init__(self, lists):
        self.lists = lists
        self.snaps = list(map(tuple, lists))
        self.lengths = list(map(len, lists))
        self.arrays = [ctypes.c_void_p.from_address(id(v) + _ITEMS_OFFSET) for v in lists]
        self.at = list(map(_VALUE, self.arrays))
        self.views = list(map(self.view, self.lengths, self.at))
        self.items = list(map(_RAW, self.views))

    @staticmethod
    def view(n, address):
        return (
            (ctypes.c_char * (n * ctypes.sizeof(ctypes.c_void_p))).from_address(address)
            if n
            else ctypes.create_string_buffer(0)
        )

    def cut_back(self):
        """Lists that only grew (a cache filled, an entry appended) cut back to what they held: as a forked job finds
        them."""
        if list(map(len, self.lists)) == self.lengths:
            return
        for v, n, snap in zip(self.lists, self.lengths, self.snaps):
            if len(v) > n and all(a is b for a, b in zip(v, snap)):
                del v[n:]

    def changed(self):
        """A list that no longer holds what it held, or None."""
        if list(map(len, self.lists)) != self.lengths:
            return next(v for v, n in zip(self.lists, self.lengths) if len(v) != n)
        if list(map(_VALUE, self.arrays)) == self.at and list(map(_RAW, self.views)) == self.items:
            return None
        for i, v in enumerate(self.lists):
            at = self.arrays[i].value
            if at == self.at[i] and self.views[i].raw == self.items[i]:
                continue
            if any(a is not b for a, b in zip(v, self.snaps[i])):
                return v
            self.at[i], self.views[i] = at, self.view(len(v), at)
        return None


_SLOTS = {}


def slot_descriptors(t):
    """The slots of instances of class `t` that code can assign: the member descriptors its classes declare with
    `__slots__` (a C type's members are not slots of this kind). Read and written through the descriptor itself: a
    subclass may hide the name behind a property (mpmath's constants do)."""
    found = _SLOTS.get(t)
    if found is None:
        found = _SLOTS[t] = tuple(
            d
            for k in t.__mro__
            if '__slots__' in k.__dict__
            for d in k.__dict__.values()
            if type(d) is types.MemberDescriptorType  # noqa: E721 (the exact type: a job's class can lie in isinstance)
        )
    return found


class SlotWatch:
    """The slots of the watched objects, by the identity of their values: after each job, put back as they were (a
    forked job finds them so). Fast: each slot of a class read over all its objects by one map of its descriptor, and
    one identity comparison of all the values; object by object only where something moved."""

    def __init__(self, slotted):
        self.groups = []  # (descriptor, the objects in which that slot was set)
        for t, objs in slotted.items():
            for d in slot_descriptors(t):
                self.groups.append((d, [o for o in objs if slot_value(d, o) is not _MISSING]))
        self.snaps = [list(map(d.__get__, objs)) for d, objs in self.groups]
        self.flat = list(_chain(self.snaps))

    def put_back(self):
        try:
            now = list(_chain(list(map(d.__get__, objs)) for d, objs in self.groups))
            if not any(map(_is_not, now, self.flat)):
                return
        except AttributeError:
            pass  # a slot deleted
        for (d, objs), snap in zip(self.groups, self.snaps):
            for o, was in zip(objs, snap):
                if slot_value(d, o) is not was:
                    d.__set__(o, was)


def slot_value(d, o):
    try:
        return d.__get__(o)
    except AttributeError:
        return _MISSING


def tags_work():
    """True when this interpreter moves a dict's version tag on every change, and only then (the check relies on it)."""
    d = {'a': 0}
    t = tag_reader(d)
    seen = [t.value]
    d['a'] = 1
    seen.append(t.value)
    d['b'] = 2
    seen.append(t.value)
    del d['a']
    seen.append(t.value)
    _ = d.get('b')
    seen.append(t.value)
    return len(set(seen[:4])) == 4 and seen[4] == seen[3]


TAGS_WORK = tags_work()


def same(d, snap):
    """Whether dict `d` holds what `snap` held: the same keys, each bound to the same object (or an equal number or
    string, put back by the job)."""
    if len(d) != len(snap):
        return False
    for k, v in snap.items():
        now = d.get(k, _MISSING)
        if now is not v and not (type(now) is type(v) and type(v) in _IMMUTABLE and now == v):
            return False
    return True


def proc_fds():
    """This process's descriptors: number → (device, inode); the listing's own is gone when it is compared."""
    fds = {}
    for name in os.listdir('/proc/self/fd'):
        try:
            st = os.fstat(int(name))
        except OSError:
            continue
        fds[int(name)] = (st.st_dev, st.st_ino)
    return fds


def same_fds(fds):
    """Whether each descriptor of `fds` (number → (device, inode)) is still open on the same file."""
    for fd, was in fds.items():
        try:
            st = os.fstat(fd)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != was:
            return False
    return True


def rss():
    with open('/proc/self/statm', 'rb') as f:
        return int(f.read().split()[1]) * PAGE


def knobs():
    """The interpreter's settings a job can change without a dict: limits, hooks, the collector, the standard streams,
    the C locale, and those of decimal and numpy when loaded."""
    out = [
        sys.getrecursionlimit(),
        sys.getswitchinterval(),
        sys.get_int_max_str_digits(),
        sys.getdlopenflags(),
        sys.gettrace(),
        sys.getprofile(),
        tuple(sys.get_asyncgen_hooks()),
        sys.get_coroutine_origin_tracking_depth(),
        gc.isenabled(),
        gc.get_threshold(),
        gc.get_debug(),
        _thread.stack_size(),
        _locale.setlocale(_locale.LC_ALL, None),
        os.getpgrp(),
        os.getsid(0),
    ]
    for s in (sys.stdin, sys.stdout, sys.stderr):
        try:
            out.append((id(s), s.closed, s.encoding, s.errors, s.line_buffering, s.write_through))
        except (AttributeError, ValueError):
            out.append((id(s), 'unreadable'))  # detached, or not a text stream
    decimal = sys.modules.get('decimal')
    if decimal is not None:
        out += [repr(decimal.DefaultContext), repr(decimal.BasicContext), repr(decimal.ExtendedContext)]
    np = sys.modules.get('numpy')
    if np is not None:
        out += [np.geterr(), np.getbufsize(), np.geterrcall(), np.get_printoptions()]
    out += c_state()
    return out


def reseed_at_fork():
    """What a fork does to the random generators: `random` reseeds its own, the zygotes reseed sympy's and numpy's."""
    random = sys.modules.get('random')
    if random is not None:
        random.seed()
    m = sys.modules.get('sympy.core.random')
    if m is not None and hasattr(m, 'seed'):
        m.seed()
    m = sys.modules.get('numpy.random')
    if m is not None:
        m.seed()


def reseeded_at_fork():
    """The generators reseed_at_fork reseeds (their state is not put back)."""
    out = [
        getattr(sys.modules.get('random'), '_inst', None),
        getattr(sys.modules.get('sympy.core.random'), 'rng', None),
    ]
    return {id(g) for g in out if g is not None}


class Baseline:
    """Everything a job could change, as the reuse process had it before its first job; `check` after each. Taken in
    two parts: the interpreter's (the walk: tens of ms and ~10 MiB on the scientific tiers), once, in the zygote
    (take_baseline), shared by every reuse process it forks, which then `adopt`s it: its own process's part."""

    def __init__(self):
        warnings = sys.modules.get('warnings')
        self.warnings = (warnings, list(warnings.filters)) if warnings is not None else None
        self.reset_dicts = [
            d for d in (getattr(sys.modules.get(m), n, None) for m, n in RESET_DICTS) if type(d) is dict
        ]
        self.reset_snaps = [dict(d) for d in self.reset_dicts]
        owners = (
            (sys.modules.get(m) if c is None else getattr(sys.modules.get(m), c, None), n) for m, c, n in RESET_ATTRS
        )
        self.reset_attrs = [
            (o, n, o.__dict__[n]) for o, n in owners if isinstance(o, (type, types.ModuleType)) and n in o.__dict__
        ]
        self.watch()

    def adopt(self):
        """The process's part, in the reuse process itself, before its first job."""
        self.pid = os.getpid()
        # kept open, read again with pread: its thread count (/proc/self/stat's 20th field) and its children
        self.stat = os.open('/proc/self/stat', os.O_RDONLY)
        self.children = os.open('/proc/self/task/%d/children' % self.pid, os.O_RDONLY)
        self.fds = proc_fds()
        self.umask = os.umask(0o077)
        os.umask(self.umask)
        self.rlimits = {r: resource.getrlimit(r) for r in RLIMITS}
        self.sched = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), os.sched_getaffinity(0))
        self.handlers = [_signal.getsignal(s) for s in SIGNALS]
        self.mask = _signal.pthread_sigmask(_signal.SIG_BLOCK, [])
        self.atexits = __import__('atexit')._ncallbacks()
        self.rss, self.jobs = rss(), 0
        self.knobs = knobs()
        return self

    def watch(self):
        """Takes the reachable state: each module's dict, and within two steps of it the dicts (by version tag) and the
        slots of objects (their values, by identity), lists, sets, bytearrays (by their items), locks and counters; and
        the state of the random generators. A dict held under a name that says it is a cache is not checked: a job
        changes its entries only through a private name (refused) or a method of its own class; it is put back, as are
        the slots and the caches kept in C (functools' lru_cache, sympy's), after a job that assigned attributes
        (put_back)."""
        dicts, self.lists, self.sets, self.locks, self.counters, self.generators = [], [], [], [], [], []
        self.caches, slotted, self.arrays = {}, {}, []  # id → cache_clear; type → [objects]; (array, its bytes)
        self.cache_dicts = []  # (a dict held as a cache, its contents at the baseline)
        ndarray = getattr(sys.modules.get('numpy'), 'ndarray', ())
        # every object visited: the modules, classes, functions and objects whose attributes the watch takes
        self.owners = seen = (
            {id(d) for d in self.reset_dicts} | {id(sys.modules)} | {id(m) for m in sys.modules.values()}
        )
        random = sys.modules.get('random')
        Random, skip = (random.Random if random is not None else ()), reseeded_at_fork()

        # Breadth first: each object is taken at the least depth it is found at (a depth-first walk that met it deep
        # down first would not look inside it again).
        later = collections.deque()

        def visit(v, depth, name=None):
            if id(v) in seen:
                return
            seen.add(id(v))
            t = type(v)
            if t is dict or (t not in _IMMUTABLE and isinstance(v, dict)):  # its subclasses too (defaultdict, …)
                if type(name) is str and 'cache' in name.lower():
                    self.cache_dicts.append((v, dict(v)))
                    return
                dicts.append(v)
                if depth < 2:
                    later.extend((x, depth + 1, k) for k, x in list(v.items()))
            elif t is list:
                self.lists.append(v)
            elif t is set or t is bytearray:
                self.sets.append((v, t(v)))
            elif t in _LOCKS:  # one free at the baseline (a running thread's own is held by design)
                if not (v.locked() if hasattr(v, 'locked') else v._is_owned()):
                    self.locks.append(v)
            elif t is _COUNT:
                self.counters.append((v, repr(v)))
            elif t in _BOUND:
                if type(getattr(v, '__self__', None)) is _COUNT:
                    visit(v.__self__, depth)
            elif isinstance(v, type):
                real = gc.get_referents(v.__dict__)
                if real and type(real[0]) is dict:
                    visit(real[0], depth)
            elif isinstance(v, types.ModuleType):
                pass  # watched as one of sys.modules
            elif t is _LRU:
                self.caches[id(v)] = v.cache_clear
            elif t is ndarray:  # a module's array: its bytes (a job writes into it in place)
                if v.flags.writeable and v.nbytes <= 1 << 20:
                    self.arrays.append((v, v.tobytes()))
            else:
                descriptors = slot_descriptors(t)
                if descriptors:
                    slotted.setdefault(t, []).append(v)
                    if depth < 2:
                        for d in descriptors:
                            x = slot_value(d, v)
                            if x is not _MISSING:
                                later.append((x, depth + 1, d.__name__))
                if t is _functools.partial:
                    later.append((v.keywords, depth + 1, 'keywords'))
                if Random and isinstance(v, Random) and id(v) not in skip:
                    try:
                        self.generators.append((v, v.getstate()))
                    except NotImplementedError:
                        pass  # SystemRandom: no state
                # A thread-local's attributes are in its thread's dict, which only its own lookup gives.
                try:
                    d = v.__dict__ if isinstance(v, _thread._local) else object.__getattribute__(v, '__dict__')
                except Exception:
                    d = None
                if type(d) is dict:
                    if callable(d.get('cache_clear')) and isinstance(v, types.FunctionType):
                        self.caches[id(v)] = d['cache_clear']  # sympy's cacheit
                    visit(d, depth)

        self.modules = dict(sys.modules)
        for m in list(self.modules.values()):
            d = getattr(m, '__dict__', None)
            if type(d) is dict:
                later.append((d, 0, None))
        while later:
            visit(*later.popleft())
        cached = getattr(sys.modules.get('sympy.core.cache'), 'CACHE', ())  # sympy's cacheit: every wrapper it made
        self.caches.update((id(w), w.cache_clear) for w in cached if callable(getattr(w, 'cache_clear', None)))
        self.lists = ListWatch(self.lists)
        self.slots = SlotWatch(slotted)
        self.caches = list(self.caches.values())
        # Dicts empty at the baseline (most: the functions') are held empty, cheaper than by their tags.
        self.empties = [d for d in dicts if not d]
        dicts = [d for d in dicts if d]
        self.dicts = dicts
        self.snaps = [dict(d) for d in dicts]
        self.readers = [tag_reader(d) for d in dicts]
        self.tags = [r.value for r in self.readers]
        self.reset_readers = [tag_reader(d) for d in self.reset_dicts]
        self.reset_tags = [r.value for r in self.reset_readers]
        self.modules_tag = tag_reader(sys.modules)
        self.modules_at = self.modules_tag.value

    def put_back(self, assigned=False):
        """What the job owns by design, put back as a forked job finds it: the caches, the class counters, the warning
        filters, the generators' states, the lists that only grew; after a job that assigned attributes (of `self` or
        `cls`: no other kind runs here, see static_taint), the slots of the watched objects, and the caches kept in C
        emptied (what they handed out may be what it changed). (Before the check: it compares what these touch with
        the baseline.)"""
        for i, r in enumerate(self.reset_readers):
            if r.value != self.reset_tags[i]:
                d = self.reset_dicts[i]
                d.clear()
                d.update(self.reset_snaps[i])
                self.reset_tags[i] = r.value
        for owner, name, value in self.reset_attrs:
            if owner.__dict__.get(name, _MISSING) is not value:
                setattr(owner, name, value)
        if self.warnings is not None and self.warnings[0].filters != self.warnings[1]:
            self.warnings[0].filters[:] = self.warnings[1]
            self.warnings[0]._filters_mutated()
        for gen, state in self.generators:
            gen.setstate(state)
        self.lists.cut_back()
        if assigned:
            self.slots.put_back()
            for clear in self.caches:
                clear()  # what they handed out to the job is no later job's
            for d, snap in self.cache_dicts:
                if not same(d, snap):
                    d.clear()
                    d.update(snap)

    def check(self, main, main_refs):
        """None when the process is as its baseline; else (what, detail): the first difference found."""
        if threads(self.stat) != 1:
            return 'thread', 'a thread is left'
        if os.pread(self.children, 64, 0).strip():
            return 'child', 'a child process is left'
        if proc_fds() != self.fds:
            return 'descriptors', 'the open descriptors changed'
        if os.umask(self.umask) != self.umask:
            return 'umask', 'the umask changed'
        for r, (soft, hard) in self.rlimits.items():
            now = resource.getrlimit(r)
            if r == resource.RLIMIT_NPROC and NPROC:
                hard = NPROC
            if now[1] != hard or (r not in PER_JOB_RLIMITS and now[0] != soft):
                return 'rlimit', 'rlimit %d changed' % r
        if (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), os.sched_getaffinity(0)) != self.sched:
            return 'scheduling', 'the scheduling changed'
        for s, h in zip(SIGNALS, self.handlers):
            if _signal.getsignal(s) is not h:
                return 'signal', 'the handler of signal %d changed' % s
        if _signal.pthread_sigmask(_signal.SIG_BLOCK, []) != self.mask:
            return 'signal', 'the signal mask changed'
        if any(_signal.getitimer(t) != (0.0, 0.0) for t in ITIMERS):
            return 'signal', 'a timer is set'
        if __import__('atexit')._ncallbacks() != self.atexits:
            return 'atexit', 'an atexit handler is left'
        if self.modules_tag.value != self.modules_at:
            new = sys.modules.keys() - self.modules.keys()
            if new:
                return 'import', 'imported ' + min(new)
            if not same(sys.modules, self.modules):
                return 'modules', 'sys.modules changed'
            self.modules_at = self.modules_tag.value
        if knobs() != self.knobs:
            return 'setting', 'an interpreter setting changed'
        if any(map(len, self.empties)):
            return 'state', 'changed: ' + describe(next(d for d in self.empties if d))
        tags = list(map(_VALUE, self.readers))
        if tags != self.tags:
            for i, (now, then) in enumerate(zip(tags, self.tags)):
                if now == then:
                    continue
                d, snap = self.dicts[i], self.snaps[i]
                if '__warningregistry__' in d and '__warningregistry__' not in snap:
                    del d['__warningregistry__']
                if not same(d, snap):
                    return 'state', 'changed: %s: %s' % (describe(d), ', '.join(map(str, changed_keys(d, snap)))[:80])
                self.tags[i] = self.readers[i].value
        moved = self.lists.changed()
        if moved is not None:
            return 'state', 'a list changed: ' + repr(moved[:3])[:80]
        if any(v != snap for v, snap in self.sets):
            return 'state', 'a set or bytearray changed'
        if any(a.tobytes() != b for a, b in self.arrays):
            return 'state', 'an array a module holds changed'
        for lock in self.locks:
            if lock.locked() if hasattr(lock, 'locked') else lock._is_owned():
                return 'lock', 'a lock is held'
        if any(repr(c) != r for c, r in self.counters):
            return 'counter', 'a counter moved'
        if sys.getrefcount(main) - 1 != main_refs:
            return 'object', 'an object of the job is left'  # - 1: this frame's
        self.jobs += 1
        if self.jobs >= MAX_JOBS:
            return 'jobs', 'ran %d jobs' % self.jobs
        if rss() - self.rss > MAX_GROWTH:
            return 'memory', 'grew by %d MiB' % ((rss() - self.rss) >> 20)
        return None

    def retake(self, touched):
        """After the process prepared its next job (which changes dicts of its own: sys, sys.modules, the caches), the
        tags of those it touched, `touched` being their indexes."""
        tags, readers = self.tags, self.readers
        for i in touched:
            tags[i] = readers[i].value
        for i, r in enumerate(self.reset_readers):
            self.reset_tags[i] = r.value
        self.modules_at = self.modules_tag.value
        self.knobs = knobs()


TAKEN = []  # the zygote's baseline, once taken


# Standard library modules that compile code they generate from identifiers (dataclass fields, namedtuple fields, …),
# never from a job's text: what they compile is not held to static_taint (it names dunders by design).
GENERATORS = tuple(
    os.sep + p for p in ('dataclasses.py', os.path.join('collections', '__init__.py'), 'typing.py', 'enum.py')
)


def compiled_by_generator():
    """Whether the code the audit hook was called for is compiled by one of GENERATORS (the caller of compile(), three
    frames up: this function, Watch.judge, Watch.hook)."""
    f = sys._getframe(3)
    return f is not None and f.f_code.co_filename.endswith(GENERATORS)


def take_baseline():
    """The baseline of this zygote's interpreter, taken as it warms (the runner's default level is reuse) or when a
    reuse
    process is first asked for; every reuse process forked after inherits it. Frozen, so that no collection walks it."""
    if not TAKEN:
        TAKEN.append(Baseline())
        gc.collect()
        gc.freeze()
    return TAKEN[0]


def changed_keys(d, snap):
    """The keys whose binding differs between dict `d` and its snapshot (the first few)."""
    return [k for k in list(d.keys() | snap.keys()) if d.get(k, _MISSING) is not snap.get(k, _MISSING)][:3]


def describe(d):
    """A watched dict's owner, for a retirement's detail: a module's name, else its first keys."""
    name = d.get('__name__')
    return name if isinstance(name, str) else ','.join(map(str, list(d)[:3]))[:64]


class Watch:
    """The audit hook of a reuse process, armed while a job's code runs: the first event of TAINTS, or code compiled
    that static_taint refuses, is written at once to the report pipe (a line `T<event>` that nothing the job does can
    take back) and ends the process after that job. A job's own limits stay its own: raising its address space or CPU
    time fails as it does in a forked job, whose hard limits they are."""

    def __init__(self):
        self.armed, self.taint, self.owners, self.inside = False, None, frozenset(), False
        self.assigned = False  # code compiled while the job ran assigns attributes of self or cls (assigns_attributes)
        sys.addaudithook(self.hook)

    def hook(self, event, args):
        if not self.armed or self.inside:
            return  # not the events its own work raises (its look at the compiler's caller)
        self.inside = True
        try:
            self.judge(event, args)
        finally:
            self.inside = False

    def judge(self, event, args):
        if event in ('resource.setrlimit', 'resource.prlimit'):
            r, limits = args[-2:]
            if r in PER_JOB_RLIMITS[:2] and limits is not None:
                soft = resource.getrlimit(r)[0]
                if any(x < 0 or x > soft for x in limits):
                    raise ValueError('not allowed to raise maximum limit')
        if self.taint is not None:
            return
        if event in TAINTS or event.startswith(TAINT_PREFIXES):
            self.mark(event)
        # A module imported (CPython raises the event only for one not in sys.modules): what it holds in C the check
        # does not read, and the job could take it out of sys.modules again.
        elif event == 'import':
            self.mark('import of %s' % args[0])
        elif event in ('object.__setattr__', 'object.__delattr__') and id(args[0]) in self.owners:
            self.mark(event)
        elif event == 'open' and (type(args[0]) is int or str(args[0]).startswith(('/proc/', '/dev/fd'))):
            self.mark('open of a descriptor')
        # A frame of the executor's own code reached: one a job's code asked for (sys._getframe deep enough), or one a
        # walk of the callers' frames read (the standard library's, traceback's with captured locals among them, read
        # each frame's code). Its locals hold the process's state: from here on, nothing it says is its loop's.
        elif event == 'sys._getframe' and id(args[0].f_globals) in OWN_GLOBALS:
            self.mark('a frame of the executor')
        elif (
            event == 'object.__getattr__'
            and args[1] == 'f_code'
            and type(args[0]) is types.FrameType  # noqa: E721 (the exact type: a job's class can lie in isinstance)
            and id(args[0].f_globals) in OWN_GLOBALS
        ):
            self.mark('a frame of the executor')
        elif event == 'compile' and not compiled_by_generator():
            text = args[0].decode('utf-8', 'replace') if type(args[0]) is bytes else args[0]
            if static_taint(text) is not None:
                self.mark('compile')
            elif assigns_attributes(text):
                self.assigned = True

    def mark(self, event):
        self.taint = event
        try:
            _write(3, b'\nT%s\n' % event.encode())
        except OSError:
            pass


# The executor's own module namespaces (one in the built executor.py, one a module in the package): a frame whose
# globals are one of them runs the executor's code.
OWN_GLOBALS = frozenset(map(id, (globals(), run_job.__globals__)))


def reuse_child():
    """A reuse process: its baseline, then a job at a time, each followed by the check; it exits when one fails.

    Lines on the report pipe (fd 3), each after a newline: `R` (baseline taken, ready), `D{nonce, status, report}` (the
    job is done; the controller answers it with a byte on the job pipe once it has read the job's files),
    `V{nonce, retire}` (the check's verdict: null, or [what, detail]), `T<event>` (tainted), `E{report}` (a tainted
    job's error report: it ends as a forked one, by its exit status)."""
    os.setsid()
    # as its zygote sets it (limits.JOB_NICE), before the baseline reads it: whichever of the two comes first
    os.setpriority(os.PRIO_PROCESS, 0, JOB_PRIORITY)
    os.closerange(5, 1 << 20)  # the zygote's socket and the pidfds of its other children
    null = os.open('/dev/null', os.O_RDWR)
    stdio = [os.dup(fd) for fd in (0, 1, 2)]  # fd 0 as its zygote left it; fds 1 and 2, put back after the clean-up
    handle_sigterm()
    gc.enable()  # as in every job (the zygote keeps its collector off)
    watch = Watch()
    base = take_baseline().adopt()
    watch.owners = base.owners
    # the descriptors this process needs: a job may not take them
    own = {fd: base.fds[fd] for fd in (3, 4, null, *stdio)}
    main, touched = prepare(base, stdio, None)
    main_refs = sys.getrefcount(main)
    context = contextvars.copy_context()
    gc.collect()
    gc.freeze()  # the baseline's own objects are never garbage: the collector skips them after each job
    _write(3, b'\nR\n')
    while True:
        job = read_job()
        if job is None:
            _exit(0)  # the controller is gone
        code, compiled, stdin, files, nonce, wait_files, kind = job
        watch.assigned = assigns_attributes(code)
        status, report = context.copy().run(run_in_context, code, compiled, stdin, files, kind, watch)
        if watch.taint is None:
            if not same_fds(own):
                watch.mark('descriptors of its own closed or replaced')
            elif threads(base.stat) > 1 or __import__('atexit')._ncallbacks() != base.atexits:
                watch.mark('a thread or an atexit handler to finish')
        if watch.taint is not None:  # it ends as a forked job ends: threads joined, atexit handlers run, exit
            try:
                if report:
                    _write(3, b'\nE' + _dumps(report).encode() + b'\n')
            except OSError:
                pass
            end_as_script()
            _exit(status)
        os.dup2(stdio[0], 0)  # a job's stdin is its own
        try:
            _write(3, b'\nD' + _dumps({'nonce': nonce, 'status': status, 'report': report}).encode() + b'\n')
        except OSError:
            _exit(status)  # the controller reads its exit, as a forked job's
        if wait_files and read_exactly(1) is None:
            _exit(0)  # the controller has read the job's files (or is gone)
        # After the answer (and its files), the job's objects go. Their finalizers (a generator's `finally`, a file's
        # flush) run here, as a forked job's never do: what they print goes to /dev/null, what they write to the work
        # dir is removed with it (the controller cleans it after the verdict), what else they do the watch and the
        # check see.
        os.dup2(null, 1)
        os.dup2(null, 2)
        watch.armed = True
        main.clear()
        gc.collect()
        watch.armed = False
        flush_std()
        os.dup2(stdio[1], 1)
        os.dup2(stdio[2], 2)
        base.put_back(watch.assigned)
        retire = ('taint', watch.taint) if watch.taint is not None else base.check(main, main_refs)
        if retire is None:
            main, _ = prepare(base, stdio, touched, bool(stdin))
            main_refs = sys.getrefcount(main)
            gc.freeze()
        _write(3, b'\nV' + _dumps({'nonce': nonce, 'retire': retire}).encode() + b'\n')
        if retire is not None:
            _exit(0)


def run_in_context(code, compiled, stdin, files, kind, watch):
    """A job in its own copy of the baseline's context: the context variables it sets go with it. decimal's context is
    one of them, made fresh as a forked job's first getcontext() makes it."""
    decimal = sys.modules.get('decimal')
    if decimal is not None:
        decimal.setcontext(decimal.Context())
    return run_kind(code, compiled, stdin, files, kind, watch)


def prepare(base, stdio, touched, stdin=True):
    """Makes the process ready for its next job as a fork would find it: a fresh __main__, a fresh sys.stdin when the
    job had one (without, it read nothing: fd 0 has nothing to give), fd 0 back, the caches put back, the generators
    reseeded; then the tags of what that changed are taken again. `touched`: the indexes of the dicts this changes, None
    the first time (found then)."""
    before = list(base.tags) if touched is None else None
    os.dup2(stdio[0], 0)
    main = fresh_main()
    if stdin:
        fresh_stdin()
    base.put_back()
    reseed_at_fork()
    if touched is None:
        touched = [i for i, r in enumerate(base.readers) if r.value != before[i]]
    base.retake(touched)
    return main, touched
