/**
 * C-level state of the extension modules the tiers preload (docs/reuse-census.md): a setting read
 * by the check retires the process (`setting`), a setter it does not read is refused (the job runs
 * forked), one that raises an audit event taints it, and what a job cannot leave behind is reused.
 */
import { forked, retired, reused, type ContaminationCase } from '../types.ts'

/** Read after each job (census.c_state, and the interpreter's settings beside it): the process retires. */
const READ: ContaminationCase[] = [
  retired(
    "socket's default timeout",
    'import socket\nsocket.setdefaulttimeout(0.25)\nprint(socket.getdefaulttimeout())',
    'setting'
  ),
  forked(
    "the C library's gettext domain",
    'import _locale\n_locale.textdomain("contamination")\nprint(_locale.textdomain(None))'
  ),
  forked(
    'a category of the C locale',
    'import _locale\n_locale.setlocale(_locale.LC_NUMERIC, "C.UTF-8")\nprint(_locale.setlocale(_locale.LC_ALL, None))'
  ),
  // (stack_size() with no size sets the default: the job prints what it set, returned when the check reads it)
  forked('the thread stack size', 'import _thread\n_thread.stack_size(1 << 20)\nprint(_thread.stack_size(1 << 20))'),
  retired('the switch interval', 'import sys\nsys.setswitchinterval(0.5)\nprint(sys.getswitchinterval())', 'setting'),
  retired(
    'the digits limit of int and str',
    'import sys\nsys.set_int_max_str_digits(640)\nprint(sys.get_int_max_str_digits())',
    'setting'
  ),
  retired(
    'the dlopen flags',
    'import os, sys\nsys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)\nprint(sys.getdlopenflags())',
    'setting'
  ),
  retired(
    'the coroutine origin tracking depth',
    'import sys\nsys.set_coroutine_origin_tracking_depth(3)\nprint(sys.get_coroutine_origin_tracking_depth())',
    'setting'
  ),
  forked(
    "decimal's extended context (a C template)",
    'import decimal\ndecimal.ExtendedContext.rounding = decimal.ROUND_DOWN\nprint(decimal.ExtendedContext.rounding)'
  ),
  forked(
    "numpy's huge-page advice for big arrays",
    'from numpy.core.multiarray import _get_madvise_hugepage, _set_madvise_hugepage\n_set_madvise_hugepage(not _get_madvise_hugepage())\nprint(_get_madvise_hugepage())'
  ),
  forked(
    "numpy's type promotion state",
    'from numpy.core.multiarray import _set_promotion_state\n_set_promotion_state("weak")\nprint("weak")'
  ),
  retired(
    "numpy's legacy global generator given another bit generator",
    'import numpy as np\nnp.random.set_bit_generator(np.random.PCG64(1))\nprint(np.random.random())',
    'setting'
  ),
  retired("numpy's error object", 'import numpy as np\nnp.seterrobj([8192, 0, None])\nprint(np.geterr())', 'setting'),
  retired("numpy's ufunc buffer size", 'import numpy as np\nnp.setbufsize(16384)\nprint(np.getbufsize())', 'setting'),
  retired("numpy's error callback", 'import numpy as np\nnp.seterrcall(print)\nprint(np.geterrcall())', 'setting'),
  retired(
    "numpy's legacy print mode",
    'import numpy as np\nnp.set_printoptions(legacy="1.13")\nprint(repr(np.float64(0.5)))',
    'setting',
    'state'
  ),
  retired(
    "scipy.special's error actions",
    'import scipy.special as sc\nsc.seterr(all="raise")\nprint(sc.geterr()["domain"])',
    'setting'
  ),
  // (reuse.TAINTS names its audit event sys.set_asyncgen_hooks_firstiter; CPython raises
  // sys.set_asyncgen_hook_firstiter)
  retired(
    'the async generator hooks',
    'import sys\nsys.set_asyncgen_hooks(firstiter=print)\nprint(sys.get_asyncgen_hooks().firstiter)',
    'setting',
    'taint'
  ),
  retired(
    "the C library's time zone read again (time's tzname rebound)",
    'import time\ntime.tzset()\nprint(time.tzname)',
    'state'
  )
]

/** Setters the check cannot read: code naming one runs forked. */
const REFUSED: ContaminationCase[] = [
  forked(
    'a codec error handler registered through encodings.codecs',
    'import encodings\nencodings.codecs.register_error("contamination", lambda e: ("?", e.end))\nprint("é".encode("ascii", "contamination"))'
  ),
  forked(
    'a codec search function unregistered',
    'import encodings\nencodings.codecs.unregister(encodings.search_function)\nprint("unregistered")'
  ),
  forked(
    "an ABC's registry emptied through a private name imported from abc",
    'from abc import _reset_registry\nfrom collections.abc import Sequence\n_reset_registry(Sequence)\nprint(isinstance(range(1), Sequence))'
  ),
  forked(
    'the import lock taken through _imp',
    'import _imp\n_imp.acquire_lock()\nprint(_imp.lock_held())\n_imp.release_lock()'
  ),
  forked(
    "a child forked by subprocess's C half (no audit event)",
    'import _posixsubprocess, os\nr, w = os.pipe()\npid = _posixsubprocess.fork_exec([b"/bin/true"], [b"/bin/true"], True, (), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None, -1, None, False)\nprint(os.waitpid(pid, 0)[1])'
  ),
  forked(
    'a gettext domain bound in the C library',
    'import _locale\n_locale.bindtextdomain("contamination", "/tmp")\nprint("bound")'
  ),
  forked('stdout made non-blocking', 'import os\nos.set_blocking(1, False)\nprint("non-blocking")'),
  forked("the collector's thresholds", 'import gc\ngc.set_threshold(1)\nprint(gc.get_threshold())'),
  forked(
    "numpy's array repr replaced",
    'import numpy as np\nnp.set_string_function(lambda a: "HIDDEN")\nprint(repr(np.arange(3)))'
  ),
  forked(
    "numpy's array operators replaced",
    'import numpy as np, warnings\nwarnings.simplefilter("ignore")\nnp.set_numeric_ops(add=np.subtract)\nprint(np.array([5]) + np.array([3]))'
  ),
  forked(
    "numpy's C type dictionary replaced",
    'import numpy as np\nfrom numpy.core.multiarray import set_typeDict\nset_typeDict(dict(np.sctypeDict))\nprint("replaced")'
  ),
  forked(
    "numpy's C legacy print mode",
    'from numpy.core.multiarray import set_legacy_print_mode\nset_legacy_print_mode(113)\nimport numpy as np\nprint(repr(np.float64(0.1)))'
  ),
  forked(
    "a ufunc's C docstring",
    'import numpy as np\ntry: np.add_newdoc_ufunc(np.add, "patched")\nexcept Exception as e: print(type(e).__name__)'
  ),
  forked(
    "numpy's test module (its allocation event hook)",
    'from numpy.core import _multiarray_tests\nprint(callable(_multiarray_tests.test_pydatamem_seteventhook_start))'
  ),
  forked(
    "ARPACK's debug output level (a Fortran common block)",
    'import scipy.sparse.linalg._eigen.arpack._arpack as arpack\narpack.debug.msaupd = 1\nprint(arpack.debug.msaupd)'
  )
]

/** Calls whose audit event taints the process: it ends after its job, as a forked one. */
const TAINTED: ContaminationCase[] = [
  retired(
    'the host name (an audit event of socket)',
    'import socket\ntry: socket.sethostname("contamination")\nexcept OSError as e: print(e.errno)',
    'taint'
  ),
  retired(
    'stdout made non-blocking through fcntl',
    'import fcntl, os\nfcntl.fcntl(1, fcntl.F_SETFL, os.O_NONBLOCK)\nprint("non-blocking")',
    'taint'
  )
]

/** What a job cannot leave behind in C: the same process takes the next job. */
const LEFT_NOTHING: ContaminationCase[] = [
  reused(
    "numpy's legacy global generator seeded (reseeded for the next job)",
    'import numpy as np\nnp.random.seed(1)\nprint(np.random.randint(100))'
  ),
  forked(
    'a KeyboardInterrupt asked for with _thread.interrupt_main (raised in the job itself)',
    'import _thread\n_thread.interrupt_main()\nprint("not reached")'
  ),
  forked(
    "struct's cache of compiled formats cleared",
    'from struct import _clearcache, pack\npack("<q", 1)\n_clearcache()\nprint(pack("<i", 2))'
  )
]

export const C_STATE: ContaminationCase[] = [...READ, ...REFUSED, ...TAINTED, ...LEFT_NOTHING]
