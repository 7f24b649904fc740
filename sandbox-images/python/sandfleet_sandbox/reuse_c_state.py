"""The C-level state of the extension modules the zygote tiers preload, for the `reuse` level's check.

State kept in C (a module's globals in its C code, not in any Python dict) is invisible to the baseline's walk. Each
item of it that a job can change is either read here, so that the check compares it before and after each job
(`c_state`), or its setter is refused by `static_taint` (`REFUSED_NAMES`: code that names it runs forked). The census
behind both lists, module by module and tier by tier, is docs/reuse-census.md; census_list.py lists the modules again.
"""
import sys

# Setters of C-level state that the check does not read (no getter, or reading it is dear): code naming one runs forked.
REFUSED_NAMES = (
    # codecs: the interpreter's codec search functions and error handlers, which no getter lists ('register' is refused
    # already; `import codecs` too, but the module is an attribute of others: encodings.codecs)
    'unregister',
    'register_error',
    # abc: an ABC's registry and caches, emptied without moving the cache token that c_state reads
    '_abc_init',
    '_abc_register',
    '_reset_registry',
    '_reset_caches',
    # the import machinery's C half: modules made outside sys.modules, the frozen-module override, code objects'
    # file names, the import lock
    '_imp',
    # subprocess's C half: a child forked without the audit event that taints
    '_posixsubprocess',
    'fork_exec',
    '_fork_exec',
    'spawnv_passfds',
    # the C library's gettext bindings, one a domain (c_state reads the current domain)
    'bindtextdomain',
    'bind_textdomain_codeset',
    # a descriptor's blocking mode, which the process's own (stdout, stderr, report and job pipes) keep from job to job:
    # reading it costs a system call a descriptor after every job
    'set_blocking',
    # numpy: its C-level settings that have no getter, the docstrings of its C objects, its test module's hooks
    'set_string_function',
    'set_numeric_ops',
    'set_typeDict',
    'set_legacy_print_mode',
    'add_docstring',
    'add_newdoc',
    'add_newdoc_ufunc',
    '_add_newdoc_ufunc',
    '_multiarray_tests',
    # scipy: ARPACK's Fortran common blocks (the level and unit of its debug output), reached only by this module's name
    '_arpack',
)

# The C-level settings c_state reads: (module, its getter, the getter's arguments), each read when the module is loaded.
READ = (
    ('_abc', 'get_cache_token', ()),  # moves at every ABC registration, by any path
    ('_locale', 'textdomain', (None,)),  # the C library's gettext domain
    ('_socket', 'getdefaulttimeout', ()),  # every new socket's timeout
    ('numpy.core._multiarray_umath', '_get_madvise_hugepage', ()),  # huge pages for big arrays
    ('numpy.core._multiarray_umath', '_get_promotion_state', ()),  # NEP 50 type promotion
    ('numpy.random.mtrand', 'get_bit_generator', ()),  # the legacy global generator's bit generator
    ('scipy.special._ufuncs', 'geterr', ()),  # what special functions do on an error
)


def c_state():
    """The readings of READ, in its order (None for a module not loaded): equal before and after a job that changed none
    of it."""
    out, loaded = [], sys.modules.get
    for module, getter, args in READ:
        f = getattr(loaded(module), getter, None)
        out.append(f(*args) if f is not None else None)
    return out
