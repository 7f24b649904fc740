#!/usr/bin/env python3
"""Builds the sandbox's programs from the package sandfleet_sandbox/: one file each, the files the images and the
backends run (executor.py, session_host.py, beside this script).

    python3 sandbox-images/python/build.py           # writes them
    python3 sandbox-images/python/build.py --check   # exits 1, naming them, when one differs from its build

Each program is its modules joined in the order ENTRIES gives: a module's docstring becomes a comment, its
`from .name import ...` lines go (the names are one namespace in the joined file), the rest stays as written; the
last module's docstring is the program's. Deterministic (the sources alone decide the output), standard library only.
Refused, so that the joined file runs as the modules do: a relative import
anywhere but at a module's top, of a module that does not come earlier in the program, or of a name that module
does not define; a top-level name defined by two modules of one program; a top-level name of the builtins; a global
name the joined program reads and neither defines, imports nor has as a builtin. Refused, so that a program carries
only what it runs: a module none of whose names the program reaches from its top level (its `main()`) by name (the
session host never judges: the judge's modules, judge_frames among them, are the executor's alone).
"""
import ast
import builtins
import os
import symtable
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = 'sandfleet_sandbox'
# program file: its modules, each after those it imports from; the last one's `main()` runs the program
ENTRIES = {
    'executor.py': (
        'sandbox_env',
        'boot',
        'libc',
        'limits',
        'frames',
        'judge_frames',
        'files',
        'tamper_checks',
        'seccomp',
        'job_process',
        'judge_job_process',
        'tiers',
        'reuse_c_state',
        'reuse_denylist',
        'reuse_process',
        'reuse_handle',
        'zygote_process',
        'zygote_handle',
        'cleanup',
        'capture',
        'results',
        'runner_channel',
        'job_run',
        'placement',
        'reuse_keeper',
        'judge_run',
        'controller',
    ),
    'session_host.py': ('sandbox_env', 'libc', 'limits', 'frames', 'files', 'cell', 'session', 'agent', 'host'),
}


class BuildError(Exception):
    pass


def defined(tree):
    """The names a module's top level defines (its imports aside: two modules may import one module)."""
    names = set()
    for node in tree.body:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
            elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    names.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
            elif isinstance(n, (ast.If, ast.Try, ast.With)):
                stack.extend(
                    n.body
                    + getattr(n, 'orelse', [])
                    + getattr(n, 'finalbody', [])
                    + [s for h in getattr(n, 'handlers', []) for s in h.body]
                )
    return names


def reached(tree):
    """The top-level names a joined program's `tree` reaches: those its top-level statements other than definitions
    read, then those each reached definition reads, by name (an attribute's name counts as its name: more is reached,
    never less)."""
    definitions = {}
    roots = set()
    for node in tree.body:
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        read |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            definitions.setdefault(node.name, set()).update(read)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}:
                definitions.setdefault(name, set()).update(read)
        elif not isinstance(node, (ast.Import, ast.ImportFrom)):
            roots |= read
    live, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name not in live and name in definitions:
            live.add(name)
            todo.extend(definitions[name])
    return live | roots


def unbound(text, name):
    """The global names program `text` reads that it neither binds at its top level (nor by `global` in a function)
    nor imports, and that are no builtins: what would raise NameError when run."""
    top = symtable.symtable(text, name, 'exec')
    bound = set(dir(builtins)) | {'__file__', '__builtins__'}
    tables, read = [top], set()
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for symbol in table.get_symbols():
            if table is top or symbol.is_declared_global():
                if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace():
                    bound.add(symbol.get_name())
            if symbol.is_referenced() and (table is top or symbol.is_global()):
                read.add(symbol.get_name())
    return read - bound


def build(name, entries=ENTRIES, root=HERE):
    """The text of program `name`: the modules `entries` lists for it, from the package in directory `root`."""
    modules = entries[name]
    seen, parts = {}, []
    for mod in modules:
        path = os.path.join(root, PACKAGE, mod + '.py')
        with open(path, encoding='utf-8') as f:
            source = f.read()
        tree = ast.parse(source, path)
        lines = source.splitlines()
        drop = set()
        doc = ast.get_docstring(tree, clean=True)
        if doc is not None:
            drop.update(range(tree.body[0].lineno - 1, tree.body[0].end_lineno))
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level:
                if node.level != 1 or node.module not in seen or node.module == mod:
                    raise BuildError(
                        '%s: %s.%s imports from .%s, which does not come before it' % (name, PACKAGE, mod, node.module)
                    )
                for a in node.names:
                    if a.asname or a.name not in seen[node.module]:
                        raise BuildError(
                            '%s: %s.%s imports %s from .%s, which does not define it (or renames it)'
                            % (name, PACKAGE, mod, a.name, node.module)
                        )
                drop.update(range(node.lineno - 1, node.end_lineno))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level and node not in tree.body:
                raise BuildError('%s: %s.%s imports from the package below its top level' % (name, PACKAGE, mod))
            if (
                isinstance(node, ast.Import)
                and any(a.name.split('.')[0] == PACKAGE for a in node.names)
                or isinstance(node, ast.ImportFrom)
                and not node.level
                and (node.module or '').split('.')[0] == PACKAGE
            ):
                raise BuildError('%s: %s.%s imports the package by name' % (name, PACKAGE, mod))
        names = defined(tree)
        for other, theirs in seen.items():
            both = names & theirs
            if both:
                raise BuildError('%s: %s defined by both %s and %s' % (name, ', '.join(sorted(both)), other, mod))
        shadowed = {n for n in names if hasattr(builtins, n) and not n.startswith('_')}
        if shadowed:
            raise BuildError(
                '%s: %s.%s defines %s, a name of the builtins' % (name, PACKAGE, mod, ', '.join(sorted(shadowed)))
            )
        seen[mod] = names
        body = '\n'.join(line for i, line in enumerate(lines) if i not in drop).strip('\n')
        head = '# ' + '-' * 16 + ' %s/%s.py' % (PACKAGE, mod)
        comment = (
            ''.join('\n#' + (' ' + line if line else '') for line in (doc or '').splitlines())
            if mod != modules[-1]
            else ''
        )
        parts.append(head + comment + '\n\n' + body + '\n')
        last_doc = doc
    if 'main' not in seen[modules[-1]]:
        raise BuildError('%s: %s.%s has no main()' % (name, PACKAGE, modules[-1]))
    header = (
        '#!/usr/bin/env python3\n'
        '# Built by sandbox-images/python/build.py from %s/: %s.\n'
        '# Edit those and run the build; a test fails while this file is not what the build makes of them.\n'
        % (PACKAGE, ', '.join(modules))
    )
    text = header + '"""' + last_doc + '\n"""\n\n' + '\n\n'.join(parts) + "\n\nif __name__ == '__main__':\n    main()\n"
    missing = unbound(text, name)
    if missing:
        raise BuildError('%s reads %s, which it neither defines nor imports' % (name, ', '.join(sorted(missing))))
    live = reached(ast.parse(text, name))
    for mod in modules:
        if seen[mod] and not seen[mod] & live:
            raise BuildError('%s: none of the names %s.%s defines is reached from its main()' % (name, PACKAGE, mod))
    return text


def main(argv):
    check = '--check' in argv
    stale = []
    try:
        for name in ENTRIES:
            text = build(name)
            path = os.path.join(HERE, name)
            try:
                with open(path, encoding='utf-8') as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current == text:
                continue
            if check:
                stale.append(name)
                continue
            tmp = path + '.tmp'
            with open(tmp, 'w', encoding='utf-8') as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
            print('build: wrote %s' % path)
    except BuildError as e:
        print('build: %s' % e, file=sys.stderr)
        return 2
    if stale:
        print(
            'build: %s differ from their build: run python3 sandbox-images/python/build.py' % ', '.join(stale),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
