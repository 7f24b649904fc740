"""The deny-list of what code may name to run in a reuse process: `static_taint` (the first name of it the code names,
or None), read by the controller before it hands a job to one, and by the reuse process's audit hook at each compile
while a job runs (reuse_process.Watch); `assigns_attributes`, after which the caches a job may have changed are
emptied. Code it refuses runs forked: what it names the reuse check cannot follow. (A static scan of the text, not taint
tracking: what a job reaches at run time is the audit hook's, reuse_process.TAINTS.)"""
import re

from .tiers import IMPORT_RE
from .reuse_c_state import REFUSED_NAMES

# Code that names one of these runs forked: what it reaches is not watched (C-level registries, soft rlimits) or is the
# executor's own (frames, code objects, attribute access by computed name, dynamic code). Dunder names are refused but
# those of ordinary classes and scripts; so is a private attribute, but on `self` or `cls`.
SAFE_DUNDERS = (
    'name',
    'main',
    'init',
    'new',
    'repr',
    'str',
    'format',
    'bytes',
    'bool',
    'hash',
    'len',
    'iter',
    'next',
    'reversed',
    'contains',
    'getitem',
    'setitem',
    'delitem',
    'missing',
    'call',
    'enter',
    'exit',
    'eq',
    'ne',
    'lt',
    'le',
    'gt',
    'ge',
    'add',
    'sub',
    'mul',
    'matmul',
    'truediv',
    'floordiv',
    'mod',
    'divmod',
    'pow',
    'lshift',
    'rshift',
    'and',
    'or',
    'xor',
    'radd',
    'rsub',
    'rmul',
    'rmatmul',
    'rtruediv',
    'rfloordiv',
    'rmod',
    'rdivmod',
    'rpow',
    'rlshift',
    'rrshift',
    'rand',
    'ror',
    'rxor',
    'iadd',
    'isub',
    'imul',
    'imatmul',
    'itruediv',
    'ifloordiv',
    'imod',
    'ipow',
    'ilshift',
    'irshift',
    'iand',
    'ior',
    'ixor',
    'neg',
    'pos',
    'abs',
    'invert',
    'complex',
    'int',
    'float',
    'index',
    'round',
    'trunc',
    'floor',
    'ceil',
    'doc',
    'slots',
    'post_init',
    'future',
    'all',
    'version',
    'annotations',
    'class_getitem',
    'set_name',
    'init_subclass',
    'match_args',
    'await',
    'aiter',
    'anext',
    'aenter',
    'aexit',
    'copy',
    'deepcopy',
    'sizeof',
    'getattr',
    'file',
)
# Modules whose import alone reaches what the check cannot follow (frames, objects by traversal, C memory, pickled
# callables, C-level registries, the process's hard limits).
STATIC_MODULES = frozenset(
    (
        'ctypes',
        '_ctypes',
        'gc',
        'inspect',
        'dis',
        'pdb',
        'bdb',
        'faulthandler',
        'tracemalloc',
        'code',
        'codeop',
        'importlib',
        'pkgutil',
        'runpy',
        'builtins',
        'imp',
        'zipimport',
        'site',
        'pickle',
        'cPickle',
        '_pickle',
        'marshal',
        'shelve',
        'copyreg',
        'dill',
        'cloudpickle',
        'weakref',
        '_weakref',
        'resource',
        'codecs',
        '_codecs',
    )
)
# Names that reach it wherever they appear: attributes by computed name, dynamic code, frames and code objects,
# functions and modules built by hand, finalizers, hooks, registries, limits and signals kept outside Python objects.
STATIC_NAMES = (
    'getattr',
    'setattr',
    'delattr',
    'vars',
    'globals',
    'locals',
    'eval',
    'exec',
    'breakpoint',
    'attrgetter',
    'methodcaller',
    'Formatter',
    'finalize',
    'FunctionType',
    'CodeType',
    'LambdaType',
    'MethodType',
    'ModuleType',
    'tb_frame',
    'f_back',
    'f_globals',
    'f_locals',
    'f_builtins',
    'f_code',
    'gi_frame',
    'gi_code',
    'cr_frame',
    'cr_code',
    'ag_frame',
    'ag_code',
    'co_code',
    'settrace',
    'setprofile',
    'register',
    'register_at_fork',
    'setrlimit',
    'prlimit',
    'siginterrupt',
    'set_wakeup_fd',
    'pthread_kill',
    'init_printing',
    'init_session',
    'set_global_settings',
    # Modules the check cannot follow reached without an import: by computed name in sys.modules, as another module's
    # attribute (numpy's ctypeslib, an array's ctypes), or through from-imports of them.
    'modules',
    'ctypes',
    'ctypeslib',
    'inspect',
    'importlib',
    'weakref',
    # Memory outside an object's bounds through public numpy calls.
    'as_strided',
    'stride_tricks',
    # The frames of the callers, walked by the standard library (the audit hook sees them too: Watch).
    'walk_stack',
    'extract_stack',
    'print_stack',
    'format_stack',
    'StackSummary',
    'capture_locals',
    'currentframe',
) + REFUSED_NAMES
# An attribute assigned or deleted: `x.y = …`, `x.y += …`, `del x.y`, but where x is `self` or `cls`, or decimal's
# context (`getcontext().prec = 50`: the job's own, a context variable of its run).
_ASSIGN_OP = r'\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)'
STATIC = re.compile(
    r'(?<!\w)(?:%s)(?!\w)|(?<!\w)__(?!(?:%s)__)\w+__|(?<!\bself)(?<!\bcls)\.\s*_(?!_)\w'
    r'|(?<!\bself)(?<!\bcls)(?<!getcontext\(\))\.\s*\w+%s|\bdel\s+(?!self\.|cls\.)[\w.]*\.\s*\w+'
    r'|\bimport\s+\(?\s*(?:\w+(?:\s+as\s+\w+)?\s*,\s*)*_(?!_)\w'  # a private name in an import list
    % ('|'.join(sorted(STATIC_NAMES, key=len, reverse=True)), '|'.join(SAFE_DUNDERS), _ASSIGN_OP)
)
# An attribute of `self` or `cls` assigned: the object may be one a cache handed out (a method called with it).
OWN_ATTRIBUTES = re.compile(r'\b(?:self|cls)\.\s*\w+%s|\bdel\s+(?:self|cls)\.' % _ASSIGN_OP)


def assigns_attributes(code):
    """Whether `code` may change an object a cache handed out (it assigns attributes of `self` or `cls`, the one kind of
    attribute assignment static_taint lets through): the caches are emptied after its job."""
    return isinstance(code, str) and OWN_ATTRIBUTES.search(code) is not None


def static_taint(code):
    """What in `code` keeps it from a reuse process (the text matched, or `import M`), or None: it may run there."""
    if not isinstance(code, str):
        return None
    m = STATIC.search(code)
    if m is not None:
        return m.group(0)[:64]
    if 'import' in code:
        for source, group in IMPORT_RE.findall(code):
            for name in [source] if source else [part.split()[0] for part in group.split(',') if part.strip()]:
                if name.split('.')[0] in STATIC_MODULES:
                    return 'import ' + name.split('.')[0]
    return None
