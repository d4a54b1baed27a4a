"""The numba compilation policy: flags live in ``cond_ros/sim/jit.py`` only.

Like stumpy's ``check_fastmath``, a lint scans every ``.py`` file under
``cond_ros/`` for hard-coded numba decorators or flags, and every module that
defines kernels must take ``kernel``/``parallel_kernel`` from
``cond_ros.sim.jit``. Runtime checks then inspect every compiled dispatcher:
the project flags (cache, nogil, no fastmath) are really applied, and no
kernel reads a mutable module global (the on-disk cache would freeze it).
"""
import ast
import importlib
import importlib.metadata
import io
import os
import pathlib
import pkgutil
import re
import sys
import tokenize
import types

import numba
import numpy as np
import pytest
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

import cond_ros
from cond_ros.sim import jit
from process_group import run_in_group

PACKAGE_ROOT = pathlib.Path(cond_ros.__file__).resolve().parent
JIT_FILE = PACKAGE_ROOT / "sim" / "jit.py"
JIT_MODULE = "cond_ros.sim.jit"
KERNEL_DECORATORS = {"kernel", "leaf_kernel", "parallel_kernel"}
NUMBA_COMPILERS = {"njit", "jit", "generated_jit", "vectorize", "guvectorize", "cfunc", "stencil", "jit_module"}
POLICY_FLAGS = {"cache", "nogil", "fastmath", "error_model", "parallel", "nopython", "boundscheck"}
MIN_KERNEL_MODULES = 5  # the lint must actually see the kernel modules (dynamics, rigid, collision, ...)

# Regexes of the brief, applied to code with comments and strings removed.
FORBIDDEN_TEXT = [
    re.compile(r"\bnumba\s*\.\s*n?jit\s*\("),
    re.compile(r"@\s*(numba\s*\.\s*)?n?jit\b"),
    re.compile(r"\bfastmath\s*="),
    re.compile(r"\bn?jit\s*\([^)]*\w+\s*="),  # jit( with hard-coded keyword flags
]


def package_files():
    files = sorted(p for p in PACKAGE_ROOT.rglob("*.py") if "__pycache__" not in p.parts)
    assert files, f"no sources found under {PACKAGE_ROOT}"
    return files


def module_name(path):
    rel = path.relative_to(PACKAGE_ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def code_only(source):
    """``source`` with comments and string literals (docstrings included) blanked out."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            out.append(" ")
        elif tok.type in (tokenize.NEWLINE, tokenize.NL):
            out.append("\n")
        else:
            out.append(tok.string + " ")
    return "".join(out)


def dotted(node):
    """'a.b.c' for a Name/Attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def resolve_import(path, node):
    """Absolute module name of an ``ImportFrom`` node in file ``path``."""
    if node.level == 0:
        return node.module
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_kernel_decorator(target):
    return dotted(target) in KERNEL_DECORATORS or (dotted(target) or "").split(".")[-1] in KERNEL_DECORATORS


def kernel_functions(tree):
    """Names of kernels: functions decorated with kernel/parallel_kernel (bare or called with options),
    and module-level ``name = kernel(fn)`` variants compiled from one shared source (umap's pattern)."""
    names = set()
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and _is_kernel_decorator(node.value.func)):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if _is_kernel_decorator(target):
                    names.add(node.name)
    return names


PY_FILES = package_files()
LINTED = [p for p in PY_FILES if p != JIT_FILE]


def test_lint_sees_jit_module():
    """The scan covers cond_ros/ and finds cond_ros/sim/jit.py (so the exclusion is not vacuous)."""
    assert JIT_FILE in PY_FILES
    assert len(LINTED) == len(PY_FILES) - 1


def lint_source(source):
    """Policy violations in one module's source (empty list when clean)."""
    tree = ast.parse(source)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "numba":
            bad = [a.name for a in node.names if a.name in NUMBA_COMPILERS]
            if bad:
                problems.append(f"line {node.lineno}: imports {bad} from {node.module}")
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name.split(".")[-1] in NUMBA_COMPILERS and name.split(".")[0] not in ("np", "numpy"):
                problems.append(f"line {node.lineno}: calls {name}(...)")
            if name.split(".")[-1] in KERNEL_DECORATORS:
                flags = [k.arg for k in node.keywords if k.arg in POLICY_FLAGS or k.arg is None]
                if flags:
                    problems.append(f"line {node.lineno}: overrides policy flags {flags} in {name}(...)")
            for kw in node.keywords:
                if kw.arg == "fastmath":
                    problems.append(f"line {node.lineno}: fastmath= keyword")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                target = dotted(dec.func if isinstance(dec, ast.Call) else dec) or ""
                if target.split(".")[-1] in NUMBA_COMPILERS:
                    problems.append(f"line {dec.lineno}: @{target} on {node.name}")
    stripped = code_only(source)
    for pattern in FORBIDDEN_TEXT:
        for match in pattern.finditer(stripped):
            problems.append(f"text {pattern.pattern!r} matches {match.group(0)!r}")
    return problems


PLANTED_VIOLATIONS = [
    "import numba\n@numba.njit\ndef f(x):\n    return x\n",
    "import numba\n@numba.njit(cache=True)\ndef f(x):\n    return x\n",
    "from numba import njit\n",
    "from numba import jit as j\n",
    "import numba\ng = numba.jit(lambda x: x)\n",
    "from .jit import kernel\n@kernel(fastmath=True)\ndef f(x):\n    return x\n",
    "from .jit import kernel\n@kernel(cache=False)\ndef f(x):\n    return x\n",
    "from .jit import kernel\nOPTS = dict(fastmath=True)\n",
    "import numba as nb\n@nb.njit(nogil=False)\ndef f(x):\n    return x\n",
    "import numba as nb\ndef f(x):\n    return x\ng = nb.njit(f)\n",
]
CLEAN_SOURCES = [
    "from .jit import kernel, parallel_kernel\n@kernel\ndef f(x):\n    return x\n"
    "@parallel_kernel\ndef g(x):\n    return x\n",
    '"""Docstring mentioning fastmath=True and numba.njit( is fine."""\n'
    "# @njit in a comment too\nfrom numba import prange\n",
    "import numpy as np\nf = np.vectorize(abs)\n",
]


@pytest.mark.parametrize("source", PLANTED_VIOLATIONS)
def test_lint_flags_planted_violation(source):
    """The lint reports each kind of forbidden construct (so a clean result means something)."""
    assert lint_source(source)


@pytest.mark.parametrize("source", CLEAN_SOURCES)
def test_lint_accepts_policy_conforming_source(source):
    """Kernels via the jit decorators, and mentions in comments/docstrings, are not violations."""
    assert lint_source(source) == []


@pytest.mark.parametrize("path", LINTED, ids=[str(p.relative_to(PACKAGE_ROOT)) for p in LINTED])
def test_no_hard_coded_numba_flags(path):
    """No module outside jit.py calls numba's compilers, hard-codes flags or mentions fastmath=.

    Checked twice: on the AST (calls, decorators, imports of njit/jit/...) and
    with the brief's text patterns on the code stripped of comments and strings.
    """
    problems = lint_source(path.read_text())
    assert not problems, f"{path.relative_to(PACKAGE_ROOT)}: " + "; ".join(problems)


def test_kernel_modules_import_decorators_from_jit():
    """Every module that defines kernels imports kernel/parallel_kernel from cond_ros.sim.jit."""
    kernel_modules = 0
    problems = []
    for path in LINTED:
        tree = ast.parse(path.read_text())
        used = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    target = dotted(dec.func if isinstance(dec, ast.Call) else dec) or ""
                    if target.split(".")[-1] in KERNEL_DECORATORS:
                        used.add(target)
        if not used:
            continue
        kernel_modules += 1
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and resolve_import(path, node) == JIT_MODULE:
                imported |= {a.asname or a.name for a in node.names if a.name in KERNEL_DECORATORS}
        missing = {u for u in used if u not in imported}
        if missing:
            problems.append(f"{path.relative_to(PACKAGE_ROOT)} uses {sorted(missing)} not imported from {JIT_MODULE}")
    assert not problems, "; ".join(problems)
    assert kernel_modules >= MIN_KERNEL_MODULES


# ---------------------------------------------------------------------------
# Runtime checks on the compiled dispatchers
# ---------------------------------------------------------------------------
def sim_modules():
    import cond_ros.sim as sim_pkg
    names = [sim_pkg.__name__] + [m.name for m in pkgutil.walk_packages(sim_pkg.__path__, sim_pkg.__name__ + ".")]
    return {name: importlib.import_module(name) for name in names}


def own_dispatchers(module):
    """Dispatchers defined in ``module`` (not re-exported from another one)."""
    return {name: obj for name, obj in vars(module).items()
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == module.__name__}


MODULES = sim_modules()
DISPATCHERS = {f"{mod}.{name}": d for mod, m in MODULES.items() for name, d in own_dispatchers(m).items()}


def test_jit_flags():
    """jit.py's flags contain cache=True, nogil=True and fastmath=False."""
    flags = jit._FLAGS
    assert flags["cache"] is True
    assert flags["nogil"] is True
    assert flags["fastmath"] is False


def test_decorators_apply_flags():
    """kernel / parallel_kernel (bare and called) create dispatchers with the policy flags; no compilation happens."""
    def plain(x):
        return x

    for dispatcher, parallel in ((jit.kernel(plain), False), (jit.kernel()(plain), False),
                                 (jit.parallel_kernel(plain), True), (jit.parallel_kernel()(plain), True)):
        assert isinstance(dispatcher, Dispatcher)
        opts = dispatcher.targetoptions
        assert opts["nogil"] is True and opts["fastmath"] is False
        assert bool(opts.get("parallel", False)) is parallel
        assert not isinstance(dispatcher._cache, NullCache), "cache=True not applied"
        assert not dispatcher.overloads, "decorating must not compile"


def test_every_dispatcher_matches_ast_and_has_policy_flags():
    """Every numba dispatcher in cond_ros.sim comes from @kernel/@parallel_kernel and carries the policy flags."""
    assert len(DISPATCHERS) >= 10
    expected = set()
    for path in LINTED:
        if path.is_relative_to(PACKAGE_ROOT / "sim"):
            expected |= {f"{module_name(path)}.{f}" for f in kernel_functions(ast.parse(path.read_text()))}
    module_level = {name for name in DISPATCHERS}
    # every module-level dispatcher is a decorated kernel (nested kernels would not be module attributes)
    assert module_level <= expected, f"dispatchers not made by the jit decorators: {sorted(module_level - expected)}"
    assert expected <= module_level, f"decorated kernels not found at module level: {sorted(expected - module_level)}"
    for name, dispatcher in DISPATCHERS.items():
        opts = dispatcher.targetoptions
        assert opts.get("nogil") is True, name
        assert opts.get("fastmath") is False, name
        assert opts.get("error_model") == jit._FLAGS["error_model"], name
        assert not isinstance(dispatcher._cache, NullCache), f"{name}: cache=True not applied"


IMMUTABLE_SCALARS = (bool, int, float, complex, str, bytes, type(None), np.number, np.bool_)


def immutable(value):
    """True for values a compiled kernel may safely freeze: constants, functions, modules, classes."""
    if isinstance(value, IMMUTABLE_SCALARS):
        return True
    if isinstance(value, tuple):
        return all(immutable(v) for v in value)
    if isinstance(value, np.dtype):
        return True
    return isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, Dispatcher,
                              numba.core.types.Type)) or callable(value) and not isinstance(value, (list, dict, set))


def global_names(code):
    """Every name a code object (and its nested code objects) may look up as a global."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= global_names(const)
    return names


def rebound_globals(module):
    """Names the module rebinds at run time through ``global`` statements."""
    try:
        tree = ast.parse(pathlib.Path(module.__file__).read_text())
    except (OSError, TypeError):
        return set()
    return {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}


@pytest.mark.parametrize("name", sorted(DISPATCHERS))
def test_kernels_do_not_read_mutable_globals(name):
    """A kernel only reads immutable globals (numbers, tuples, functions, modules, other kernels).

    co_names also lists attribute names; only names that are globals of the
    kernel's module are checked. Names rebound via ``global`` are mutable too.
    """
    dispatcher = DISPATCHERS[name]
    func = dispatcher.py_func
    module = importlib.import_module(func.__module__)
    rebound = rebound_globals(module)
    bad = []
    for g in sorted(global_names(func.__code__)):
        if g not in func.__globals__:
            continue
        value = func.__globals__[g]
        if not immutable(value) or g in rebound:
            bad.append(f"{g} ({type(value).__name__})")
    assert not bad, f"{name} reads mutable globals: {bad}"


_PLANTED_TABLE = np.arange(3.0)
_PLANTED_LIMIT = 3


def _planted_reader(i):
    return _PLANTED_TABLE[i] + _PLANTED_LIMIT


def test_mutable_global_check_flags_planted_array():
    """The global check reports a module-level ndarray and accepts an int constant."""
    names = global_names(_planted_reader.__code__)
    flagged = {g for g in names if g in _planted_reader.__globals__ and not immutable(_planted_reader.__globals__[g])}
    assert flagged == {"_PLANTED_TABLE"}


def test_cache_dir_policy(tmp_path, monkeypatch):
    """Kernels are cached beside a writable install; a NUMBA_CACHE_DIR the user set is left alone; the user
    cache honours XDG_CACHE_HOME. (A read-only install, whose kernels go to the user cache, is tested end to
    end in test/ros/test_install.py.)"""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    (tmp_path / "sim").mkdir()
    assert jit.cache_dir_for(str(tmp_path)) is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jit.user_cache_dir() == str(tmp_path / "xdg" / "cond_ros" / "numba")
    # root writes anywhere: stand in for a read-only dir
    monkeypatch.setattr(jit.os, "access", lambda path, mode: False)
    assert jit.cache_dir_for(str(tmp_path)) == jit.user_cache_dir()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert jit.cache_dir_for(str(tmp_path)) is None  # not writable, but the user chose


def test_no_two_kernels_share_a_cache_index():
    """numba keys its on-disk cache by module, qualified name and signature, not by flags: two dispatchers of
    one function with different flags (a serial and a parallel twin) would load each other's machine code."""
    index_files = {}
    for name, dispatcher in DISPATCHERS.items():
        index = dispatcher._cache._cache_file._index_name
        index_files.setdefault(index, []).append(name)
    shared = {index: names for index, names in index_files.items() if len(names) > 1}
    assert len(index_files) >= 20, "the check must see the kernels"
    assert not shared, f"kernels sharing a numba cache index: {shared}"


def test_parallel_twin_is_cached_apart_and_computes_the_same():
    def scaled(x, out):
        for i in numba.prange(x.shape[0]):
            out[i] = 2.0 * x[i]

    serial, parallel = jit.kernel(scaled), jit.parallel_kernel(scaled)
    assert serial._cache._cache_file._index_name != parallel._cache._cache_file._index_name
    assert parallel.py_func.__name__ == "scaled_parallel" and parallel.targetoptions.get("parallel")
    x = np.arange(5.0)
    a, b = np.empty(5), np.empty(5)
    serial.py_func(x, a)
    parallel.py_func(x, b)
    assert np.array_equal(a, b) and np.array_equal(a, 2.0 * x)


# Ten steps of soft_ball in a fresh process: its FEM assembly and coarse operator run parallel kernels (A x only
# from 8000 rows, which soft_ball does not reach); prints the threading layer numba used and a digest of the state.
LAYER_RUN = """
import hashlib
import numba
from cond_ros.scenes import edited_scene
scene = edited_scene("soft_ball")
sim = scene.simulator
scene.warm_up()
for _ in range(10):
    sim.step(scene.control(sim.state.time))
state = b"".join(getattr(sim.state, f).tobytes() for f in ("particle_q", "particle_qd", "body_q", "body_qd"))
print("layer", numba.threading_layer(), hashlib.sha256(state).hexdigest())
"""


def _threading_layers() -> list:
    """numba's layers that can run here: OpenMP and its own workqueue always; TBB where the tbb package is
    installed (a dependency on x86-64; a library, no Python module)."""
    try:
        importlib.metadata.version("tbb")
        return ["omp", "workqueue", "tbb"]
    except importlib.metadata.PackageNotFoundError:
        return ["omp", "workqueue"]


def test_every_threading_layer_gives_the_same_bits():
    """The parallel kernels write disjoint rows and sum in the serial order, so the threading layer (which
    threads run which chunks, how they wait) cannot change a bit: ten FEM steps on each layer, each in its own
    process, give the same state. Each process must also report the layer it was asked for (numba would fall
    back to another one silently)."""
    digests = {}
    for layer in _threading_layers():
        code, out, _ = run_in_group([sys.executable, "-c", LAYER_RUN], timeout=600,
                                    env={**os.environ, "NUMBA_THREADING_LAYER": layer})
        assert code == 0, out
        line = [text for text in out.splitlines() if text.startswith("layer ")][-1].split()
        assert line[1] == layer, out
        digests[layer] = line[2]
    assert len(set(digests.values())) == 1, digests


CALLEE = "from .jit import kernel\n\n\n@kernel\ndef value():\n    return {}\n"
CALLER = "from .callee import value\nfrom .jit import kernel\n\n\n@kernel\ndef twice():\n    return 2 * value()\n"


def test_an_edit_to_a_called_kernel_recompiles_its_callers(tmp_path):
    """A cached kernel holds the machine code of the kernels it calls from other files. numba checks only the
    caller's own file, so an edited callee went unseen (the caller kept the old code); the project's cache
    stamp covers every file of the kernels' package. End to end, in a package made for the test: its jit.py
    is ours, one module's kernel calls another's, and the callee is edited between two processes."""
    import shutil
    import subprocess
    import sys
    sim = tmp_path / "pkg" / "sim"
    sim.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (sim / "__init__.py").write_text("")
    shutil.copy(jit.__file__, sim / "jit.py")
    (sim / "caller.py").write_text(CALLER)
    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_CACHE_DIR"}
    probe = ["import sys; from pkg.sim import caller; print(caller.twice()); "
             "print(len(caller.twice.stats.cache_hits))"]

    def run():
        out = subprocess.run([sys.executable, "-c", *probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        value, hits = out.stdout.split()
        return int(value), int(hits)

    (sim / "callee.py").write_text(CALLEE.format(1))
    assert run() == (2, 0)  # compiled
    assert run() == (2, 1)  # from the cache
    (sim / "callee.py").write_text(CALLEE.format(5))
    assert run() == (10, 0)  # the caller recompiled with the edited callee


def test_compile_timer_counts_compilation_only():
    """CompileTimer sees a kernel's first compilation (a new function must compile: tens of ms at least), and
    neither a second call with the same types nor plain Python time."""
    @numba.njit
    def add_one(x):
        return x + 1

    with jit.CompileTimer() as timer:
        add_one(1)
        first = timer.seconds
        add_one(2)
        sum(range(200_000))
    assert first > 0.005 and timer.seconds == first
    with jit.CompileTimer() as again:
        add_one(3.0)  # new argument types: compiles again
    assert again.seconds > 0.0
