"""Kernel isolation layers used by the sandbox, each one optional and reported.

Two moments matter:

* `isolate_zygote()` runs once, in a fresh fork-server ("zygote") process, before it serves anything: a new
  network namespace (no interfaces but a downed loopback), a new mount namespace in which every mount is made
  read-only and a small tmpfs is mounted over /tmp, and, when not started as root, a user namespace so the two
  others are allowed at all.
* `confine_child()` runs in each forked child right before the untrusted program: rlimits, a scrubbed
  environment, an unprivileged uid/gid (root start) or dropped capabilities (user namespace), no_new_privs and a
  seccomp filter that refuses sockets other than AF_UNIX, ptrace and privilege or namespace changes.

Each layer returns a `Layer` saying whether it is on and, if not, why; nothing is skipped silently.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
import stat
import sys
from dataclasses import dataclass

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
# Every CLONE_NEW* bit (mount, cgroup, uts, ipc, user, pid, net): a sandboxed program may not create namespaces.
_CLONE_NS_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
_SIGCHLD = 17
_SYS_CLONE = 56  # x86_64; other architectures fall back to os.fork (reported)
_SYS_MOUNT_SETATTR = 442
_SYS_OPEN_TREE = 428
_SYS_MOVE_MOUNT = 429
_OPEN_TREE_CLONE = 1
_MOVE_MOUNT_F_EMPTY_PATH = 4
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_PR_SET_PDEATHSIG = 1
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
_SYS_CAPSET = 126
_AF_UNIX = 1

_libc = ctypes.CDLL(None, use_errno=True)
# PyDLL keeps the GIL held across the call: a raw clone() must not happen while another thread could run.
_pylibc = ctypes.PyDLL(None, use_errno=True)
_pylibc.syscall.restype = ctypes.c_long
_libc.syscall.restype = ctypes.c_long

# Syscalls refused with EPERM. io_uring is here because its operations bypass seccomp entirely.
BLOCKED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid",
    "capset", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "mount_setattr", "move_mount",
    "open_tree", "fsopen", "fsmount", "fsconfig", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm",
    "syslog", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "fanotify_init", "io_uring_setup", "io_uring_enter", "io_uring_register", "personality",
)


@dataclass(frozen=True)
class Layer:
    """One isolation layer: its name, whether it is active, and why not when it is not."""

    name: str
    on: bool
    detail: str = ""


@dataclass(frozen=True)
class ChildLimits:
    """Resource limits applied in the child with setrlimit."""

    cpu_s: int
    memory_bytes: int
    max_processes: int
    max_file_bytes: int
    max_open_files: int


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    fs = fstype.encode() if fstype else None
    opts = data.encode() if data else None
    _check(_libc.mount(source.encode(), target.encode(), fs, ctypes.c_ulong(flags), opts), f"mount {target}")


def _write_file(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _enter_user_namespace() -> None:
    uid, gid = os.getuid(), os.getgid()
    _unshare(CLONE_NEWUSER)
    _write_file("/proc/self/setgroups", "deny")
    _write_file("/proc/self/uid_map", f"0 {uid} 1")
    _write_file("/proc/self/gid_map", f"0 {gid} 1")


def _remount_read_only() -> None:
    attr = (ctypes.c_uint64 * 4)(_MOUNT_ATTR_RDONLY, 0, 0, 0)  # struct mount_attr {set, clr, propagation, userns}
    res = _libc.syscall(_SYS_MOUNT_SETATTR, -100, b"/", _AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr))
    _check(int(res), "mount_setattr(/, read-only)")


def isolate_zygote(tmp_mb: int) -> list[Layer]:
    """Put the calling (zygote) process into its own network and mount namespaces; report each layer."""
    layers: list[Layer] = []
    userns = os.geteuid() != 0
    if userns:
        try:
            _enter_user_namespace()
            layers.append(Layer("user_namespace", True, "not started as root: programs run as root of a user ns"))
        except OSError as exc:
            layers.append(Layer("user_namespace", False, str(exc)))
            return layers + [Layer(n, False, "needs root or a user namespace") for n in ("network", "filesystem")]
    try:
        _unshare(CLONE_NEWNET)
        layers.append(Layer("network", True, "new network namespace, no interfaces up"))
    except OSError as exc:
        layers.append(Layer("network", False, str(exc)))
    layers.append(_isolate_filesystem(tmp_mb))
    return layers


def _isolate_filesystem(tmp_mb: int) -> Layer:
    try:
        _unshare(CLONE_NEWNS)
        _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
        _expose_import_paths(sys.path)
        _remount_read_only()  # before the tmpfs, which must stay writable
        _mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={tmp_mb}m,mode=1777")
        if os.path.isdir("/dev/shm"):  # POSIX semaphores and shared memory (multiprocessing) live here
            _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "size=16m,mode=1777")
        detail = f"everything read-only except private tmpfs on /tmp ({tmp_mb} MiB) and /dev/shm"
        return Layer("filesystem", True, detail)
    except OSError as exc:
        return Layer("filesystem", False, str(exc))


def _blocked_ancestor(path: str) -> str | None:
    """The highest directory on `path` that "other" users cannot traverse, if any."""
    current = "/"
    for part in path.strip("/").split("/"):
        current = os.path.join(current, part)
        if os.path.isdir(current) and not os.stat(current).st_mode & stat.S_IXOTH:
            return current
    return None


def _expose_import_paths(paths: list[str]) -> None:
    """Make the interpreter's import paths reachable by the unprivileged sandbox uid.

    A Python installed under a private home (pyenv in /root, mode 700) is untraversable for other users, so
    imports that were not preloaded would fail. Inside the zygote's own mount namespace we cover each such
    directory with an empty tmpfs holding bind mounts of only the import paths under it: the rest of that home
    (keys, caches, credentials) stays invisible. The host's view is unchanged.
    """
    groups: dict[str, list[str]] = {}
    for path in sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)}):
        blocked = _blocked_ancestor(path)
        kept = groups.setdefault(blocked, []) if blocked and blocked != path else None
        if kept is not None and not any(path.startswith(k + "/") for k in kept):
            kept.append(path)
    for blocked, keep in groups.items():
        trees = [(path, _open_tree(path)) for path in keep]
        _mount("tmpfs", blocked, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
        for path, tree_fd in trees:
            os.makedirs(path, mode=0o755, exist_ok=True)
            res = _libc.syscall(_SYS_MOVE_MOUNT, tree_fd, b"", -100, path.encode(), _MOVE_MOUNT_F_EMPTY_PATH)
            os.close(tree_fd)
            _check(int(res), f"move_mount {path}")


def _open_tree(path: str) -> int:
    fd = int(_libc.syscall(_SYS_OPEN_TREE, -100, path.encode(), _OPEN_TREE_CLONE | _AT_RECURSIVE | os.O_CLOEXEC))
    if fd < 0:
        _check(fd, f"open_tree {path}")
    return fd


def clone_into_pid_namespace() -> tuple[int, Layer]:
    """fork() into a new PID namespace: the child is its init, so every process it leaves dies with it.

    Returns (pid, layer) like os.fork() returns pid. Falls back to os.fork() when the kernel refuses.
    """
    pid = int(_pylibc.syscall(_SYS_CLONE, _SIGCHLD | CLONE_NEWPID, 0, 0, 0, 0))
    if pid >= 0:
        return pid, Layer("pid_namespace", True, "each run is init of its own PID namespace")
    reason = os.strerror(ctypes.get_errno())
    return os.fork(), Layer("pid_namespace", False, f"clone(CLONE_NEWPID): {reason}; process-group kill only")


def probe_pid_namespace() -> Layer:
    """Check once whether per-run PID namespaces work here (a throwaway clone)."""
    pid, layer = clone_into_pid_namespace()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return layer


def apply_rlimits(limits: ChildLimits) -> None:
    """Resource limits for the child; RLIMIT_NPROC counts per uid, hence a uid per zygote."""
    settings = {
        resource.RLIMIT_CPU: (limits.cpu_s, limits.cpu_s + 1),
        resource.RLIMIT_AS: (limits.memory_bytes, limits.memory_bytes),
        resource.RLIMIT_NPROC: (limits.max_processes, limits.max_processes),
        resource.RLIMIT_FSIZE: (limits.max_file_bytes, limits.max_file_bytes),
        resource.RLIMIT_NOFILE: (limits.max_open_files, limits.max_open_files),
        resource.RLIMIT_CORE: (0, 0),
    }
    for which, value in settings.items():
        resource.setrlimit(which, value)


def drop_privileges(uid: int, gid: int) -> None:
    """Become an unprivileged uid/gid (root start), or drop every capability (user namespace start)."""
    if os.getuid() == 0 and uid != 0:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # leaving uid 0 clears every capability set: no capset needed
    else:
        _drop_capabilities()
    _check(_libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0), "prctl(PDEATHSIG)")  # set after setuid, which clears it


def _drop_capabilities() -> None:
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable x 2 words: all zero
    _check(int(_libc.syscall(_SYS_CAPSET, ctypes.byref(header), ctypes.byref(data))), "capset")


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_CMP_NE = 1
_SCMP_CMP_MASKED_EQ = 7


def _scmp_errno(err: int) -> int:
    return 0x00050000 | (err & 0xFFFF)


def build_seccomp_filter() -> bytes:
    """Compile the filter once with libseccomp and return the raw BPF program (loaded per child by prctl)."""
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    lib = ctypes.CDLL(name, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    ctx = lib.seccomp_init(ctypes.c_uint32(_SCMP_ACT_ALLOW))
    if not ctx:
        raise OSError(errno.EINVAL, "seccomp_init failed")
    try:
        _add_rules(lib, ctypes.c_void_p(ctx))
        return _export_bpf(lib, ctypes.c_void_p(ctx))
    finally:
        lib.seccomp_release(ctypes.c_void_p(ctx))


def _rule(lib: ctypes.CDLL, ctx: ctypes.c_void_p, action: int, syscall: str, *cmps: _ArgCmp) -> None:
    nr = lib.seccomp_syscall_resolve_name(syscall.encode())
    if nr < 0:  # not a syscall on this architecture
        return
    array = (_ArgCmp * max(len(cmps), 1))(*cmps)
    _check(-lib.seccomp_rule_add_array(ctx, ctypes.c_uint32(action), nr, len(cmps), array), f"seccomp {syscall}")


def _add_rules(lib: ctypes.CDLL, ctx: ctypes.c_void_p) -> None:
    eperm = _scmp_errno(errno.EPERM)
    for name in BLOCKED_SYSCALLS:
        _rule(lib, ctx, eperm, name)
    # Sockets: only AF_UNIX (asyncio's self-pipe, multiprocessing); the network namespace is the second wall.
    _rule(lib, ctx, _scmp_errno(errno.EACCES), "socket", _ArgCmp(0, _SCMP_CMP_NE, _AF_UNIX, 0))
    _rule(lib, ctx, _scmp_errno(errno.EACCES), "socketpair", _ArgCmp(0, _SCMP_CMP_NE, _AF_UNIX, 0))
    # New namespaces through clone(); clone3 passes flags in memory seccomp cannot read, so make libc fall back.
    for flag in _CLONE_NS_FLAGS:
        _rule(lib, ctx, eperm, "clone", _ArgCmp(0, _SCMP_CMP_MASKED_EQ, flag, flag))
    _rule(lib, ctx, _scmp_errno(errno.ENOSYS), "clone3")


def _export_bpf(lib: ctypes.CDLL, ctx: ctypes.c_void_p) -> bytes:
    read_fd, write_fd = os.pipe()
    try:
        _check(-lib.seccomp_export_bpf(ctx, write_fd), "seccomp_export_bpf")
        os.close(write_fd)
        write_fd = -1
        chunks = []
        while chunk := os.read(read_fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


class SeccompProgram:
    """A compiled filter held in C memory, ready for the child to install with two prctl calls."""

    def __init__(self, bpf: bytes) -> None:
        self._buffer = ctypes.create_string_buffer(bpf, len(bpf))  # built in the zygote, not per run
        self._prog = _SockFprog(len(bpf) // 8, ctypes.cast(self._buffer, ctypes.c_void_p))

    def load(self) -> None:
        """Install on the calling process (after no_new_privs, required without CAP_SYS_ADMIN)."""
        _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(_libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._prog), 0, 0), "prctl(SECCOMP)")
