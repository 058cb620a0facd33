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

import contextlib
import ctypes
import ctypes.util
import errno
import os
import resource
import sys
from dataclasses import dataclass

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
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


def _remount_read_only(path: str) -> None:
    attr = (ctypes.c_uint64 * 4)(_MOUNT_ATTR_RDONLY, 0, 0, 0)  # struct mount_attr {set, clr, propagation, userns}
    res = _libc.syscall(_SYS_MOUNT_SETATTR, -100, path.encode(), _AT_RECURSIVE, ctypes.byref(attr),
                        ctypes.sizeof(attr))
    _check(int(res), f"mount_setattr({path}, read-only)")


def isolate_zygote(import_paths: list[str]) -> list[Layer]:
    """Put the calling (zygote) process into its own network, IPC and mount namespaces; report each layer."""
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
        _unshare(CLONE_NEWNET | CLONE_NEWIPC)
        layers.append(Layer("network", True, "new network namespace, no interfaces up"))
    except OSError as exc:
        layers.append(Layer("network", False, str(exc)))
    layers.append(_isolate_filesystem(import_paths, keep_proc=userns))
    return layers


def _isolate_filesystem(import_paths: list[str], keep_proc: bool) -> Layer:
    try:
        _unshare(CLONE_NEWNS)
        _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
        root = _root_mountpoint(import_paths)
        shown = build_root(root, import_paths, keep_proc)
        _pivot_into(root)
        return Layer("filesystem", True, f"a read-only root of {len(shown)} paths (system libraries, the Python "
                                         "installation and its import paths); fresh tmpfs /tmp, /dev/shm per run")
    except OSError as exc:
        return Layer("filesystem", False, str(exc))


# Where the new root is built, in the zygote's own mount namespace only: a directory no shown path lives under.
_ROOT_MOUNTPOINTS = ("/mnt", "/media", "/srv", "/var/empty", "/opt", "/tmp")
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/mime.types")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
_MS_NOEXEC = 0x8
_MNT_DETACH = 2
_SYS_PIVOT_ROOT = 155


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


def _root_mountpoint(import_paths: list[str]) -> str:
    paths = python_paths(import_paths)
    for candidate in _ROOT_MOUNTPOINTS:
        if os.path.isdir(candidate) and not any(p.startswith(candidate + "/") for p in paths):
            return candidate
    raise OSError(errno.ENOENT, f"no directory to build the root in (tried {', '.join(_ROOT_MOUNTPOINTS)})")


def build_root(root: str, import_paths: list[str], keep_proc: bool) -> list[str]:
    """A read-only tmpfs root at `root` holding only what Python and its packages need; returns what it shows.

    Every source is cloned (open_tree) before the tmpfs covers `root`, so paths under it (a virtualenv in /tmp)
    can be shown too.
    """
    shown = [p for p in _SYSTEM_DIRS + _SYSTEM_FILES + _DEVICES if os.path.lexists(p)]
    shown += _outermost(python_paths(import_paths))
    links = [(p, os.readlink(p)) for p in shown if os.path.islink(p) and os.path.dirname(p) in ("/", "/etc")]
    trees = [(p, _open_tree(p)) for p in shown if p not in dict(links)]
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID, "size=4m,mode=0755")
    for path, target in links:
        os.makedirs(os.path.dirname(root + path), mode=0o755, exist_ok=True)
        os.symlink(target, root + path)
    for path, tree_fd in trees:
        _attach(tree_fd, root + path, is_dir=os.path.isdir(path))
    for name in ("tmp", "proc", "dev/shm"):
        os.makedirs(root + "/" + name, mode=0o1777 if name == "tmp" else 0o755, exist_ok=True)
    if keep_proc:  # a user namespace may mount a new /proc only where a full one is already visible
        _attach(_open_tree("/proc"), root + "/proc", is_dir=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    _remount_read_only(root)
    return shown


def _outermost(paths: list[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(paths):
        if not any(path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def _attach(tree_fd: int, target: str, is_dir: bool) -> None:
    """Attach a detached mount tree (from open_tree) at `target`, creating the mountpoint; closes the fd."""
    os.makedirs(target if is_dir else os.path.dirname(target), mode=0o755, exist_ok=True)
    if not is_dir:
        open(target, "a").close()
    res = _libc.syscall(_SYS_MOVE_MOUNT, tree_fd, b"", -100, target.encode(), _MOVE_MOUNT_F_EMPTY_PATH)
    os.close(tree_fd)
    _check(int(res), f"move_mount {target}")


def _pivot_into(root: str) -> None:
    os.chdir(root)
    _check(int(_libc.syscall(_SYS_PIVOT_ROOT, b".", b".")), "pivot_root")
    _check(_libc.umount2(b".", _MNT_DETACH), "umount the old root")
    os.chdir("/")
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE)


def clone_run(namespaces: bool = True) -> int:
    """fork() into new PID, mount and IPC namespaces (or none): returns the pid like fork() does.

    A raw clone: the interpreter's fork hooks do not run (about 1 ms and 150 page faults less than os.fork), which
    is only safe in a single-threaded process. With namespaces the child is init of its PID namespace, so every
    process it leaves dies with it. Raises OSError when the kernel refuses; the zygote has checked at start
    (`probe_run_namespaces`) that it does not.
    """
    flags = _SIGCHLD | (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC if namespaces else 0)
    pid = int(_pylibc.syscall(_SYS_CLONE, flags, 0, 0, 0, 0))
    if pid < 0:
        raise OSError(ctypes.get_errno(), f"clone: {os.strerror(ctypes.get_errno())}")
    return pid


def probe_run_namespaces() -> Layer:
    """Check once that per-run PID, mount and IPC namespaces work here (a throwaway clone)."""
    try:
        pid = clone_run()
    except OSError as exc:
        return Layer("pid_namespace", False, f"{exc}; runs are plain forks, killed by process group")
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return Layer("pid_namespace", True, "each run is init of its own PID namespace, with its own IPC namespace")


def mount_run_filesystems(tmp_mb: int, tmp_paths: list[str]) -> str:
    """In a candidate's fresh mount namespace: a new tmpfs /tmp and /dev/shm and its own /proc.

    `tmp_paths` are import paths that live under /tmp (a virtualenv there), put back over the new tmpfs.
    Returns how /proc was provided ("own" or why it is empty).
    """
    tmp_trees = [(path, os.path.isdir(path), _open_tree(path)) for path in tmp_paths]
    _mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={tmp_mb}m,mode=1777")  # mounts are private
    _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "size=16m,mode=1777")
    for path, is_dir, tree_fd in tmp_trees:
        _attach(tree_fd, path, is_dir)
    try:
        _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        return "own"
    except OSError as exc:
        _mount("tmpfs", "/proc", "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "size=4k,mode=0555")
        return f"empty ({exc})"


def tmp_import_paths(import_paths: list[str]) -> list[str]:
    """The import paths under /tmp (a virtualenv there), which each run's fresh /tmp must show again."""
    return [p for p in _outermost(python_paths(import_paths)) if p.startswith("/tmp/")]


def _open_tree(path: str) -> int:
    fd = int(_libc.syscall(_SYS_OPEN_TREE, -100, path.encode(), _OPEN_TREE_CLONE | _AT_RECURSIVE | os.O_CLOEXEC))
    if fd < 0:
        _check(fd, f"open_tree {path}")
    return fd


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
_NON_STREAM_TYPES = (2, 3, 4, 5, 6, 10)  # SOCK_DGRAM, RAW, RDM, SEQPACKET, DCCP, PACKET


def _scmp_errno(err: int) -> int:
    return 0x00050000 | (err & 0xFFFF)


def build_seccomp_filter() -> bytes:
    """Compile the filter once with libseccomp and return the raw BPF program (loaded per process by prctl)."""
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
    # No socket() of any family: an AF_UNIX socket could connect to any socket file on the host (docker.sock,
    # /dev/log). Only connected pairs: socketpair(AF_UNIX, SOCK_STREAM) for asyncio and multiprocessing.
    _rule(lib, ctx, _scmp_errno(errno.EACCES), "socket")
    _rule(lib, ctx, _scmp_errno(errno.EACCES), "socketpair", _ArgCmp(0, _SCMP_CMP_NE, _AF_UNIX, 0))
    for sock_type in _NON_STREAM_TYPES:  # a datagram pair can still sendto() a socket file by its path
        _rule(lib, ctx, _scmp_errno(errno.EACCES), "socketpair", _ArgCmp(1, _SCMP_CMP_MASKED_EQ, 0xF, sock_type))
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


# ---------------------------------------------------------------- memory cgroup


def _own_cgroup_dir() -> str:
    """This process's memory cgroup directory: the v1 memory hierarchy when mounted, else the v2 one."""
    with open("/proc/self/cgroup") as fh:
        lines = fh.read().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(",") and os.path.isdir("/sys/fs/cgroup/memory"):
            return "/sys/fs/cgroup/memory" + path
    v2 = next((line.split(":", 2)[2] for line in lines if line.startswith("0::")), None)
    if v2 is None:
        raise OSError(errno.ENOENT, "no memory cgroup hierarchy is mounted")
    return "/sys/fs/cgroup" + v2


def create_memory_cgroup(name: str) -> str:
    """A child memory cgroup of ours, named `name`; OSError when cgroups cannot be written here."""
    path = os.path.join(_own_cgroup_dir(), name)
    os.mkdir(path)
    if not any(os.path.exists(os.path.join(path, f)) for f in ("memory.limit_in_bytes", "memory.max")):
        os.rmdir(path)
        raise OSError(errno.ENOTSUP, "the memory controller is not enabled for our cgroup")
    return path


def remove_cgroup(path: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(path)


class MemoryCgroup:
    """A per-worker memory cgroup, held by open files (the zygote's root hides /sys): limit, join, OOM count.

    It bounds what RLIMIT_AS does not see (memfd and tmpfs pages, page tables) and kills the run when it is full.
    """

    def __init__(self, path: str) -> None:
        v1 = os.path.exists(os.path.join(path, "memory.limit_in_bytes"))
        names = ("memory.limit_in_bytes", "memory.oom_control") if v1 else ("memory.max", "memory.events")
        self.procs = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY)
        self.limit_fd = os.open(os.path.join(path, names[0]), os.O_WRONLY)
        self.events = os.open(os.path.join(path, names[1]), os.O_RDONLY)
        swap = os.path.join(path, "memory.memsw.limit_in_bytes" if v1 else "memory.swap.max")
        self.swap_fd = os.open(swap, os.O_WRONLY) if os.path.exists(swap) else None
        self.limit: int | None = None
        self.v1 = v1

    def set_limit(self, limit: int) -> None:
        """Bound memory (and swap: none beyond it) at `limit` bytes."""
        if limit == self.limit:
            return
        writes = [(self.limit_fd, limit), (self.swap_fd, limit if self.v1 else 0)]
        if self.v1 and self.limit is not None and limit > self.limit:
            writes.reverse()  # v1 refuses a memory limit above the memory+swap limit
        for fd, value in writes:
            if fd is not None:
                os.pwrite(fd, str(value).encode(), 0)
        self.limit = limit

    def join(self) -> None:
        """Move the calling process into the cgroup (before it drops its privileges)."""
        os.pwrite(self.procs, b"0", 0)

    def oom_kills(self) -> int:
        for line in os.pread(self.events, 4096, 0).decode().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0
