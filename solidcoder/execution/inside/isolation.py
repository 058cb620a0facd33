"""Kernel isolation layers used by the sandbox, each one optional and reported.

Two moments matter:

* `isolate_zygote()` runs once, in a fresh fork-server ("zygote") process, before it serves anything: new network
  and IPC namespaces (no interface up), a new mount namespace rooted at a minimal read-only tree (`rootfs.py`),
  and, when not started as root, a user namespace so that the others are allowed at all.
* Each run is a raw clone (`clone_run`) into new PID, mount and IPC namespaces; right before the untrusted code,
  the child applies rlimits, an unprivileged uid/gid (root start) or dropped capabilities (user namespace),
  no_new_privs and a seccomp filter that refuses socket(), ptrace and privilege or namespace changes.

Each layer returns a `Layer` saying whether it is on and, if not, why; nothing is skipped silently.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass

from solidcoder.execution.inside import rootfs
from solidcoder.execution.inside.linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    check,
    libc,
    pylibc,
    unshare,
)

# Every CLONE_NEW* bit (mount, cgroup, uts, ipc, user, pid, net): a sandboxed program may not create namespaces.
_CLONE_NS_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
_SIGCHLD = 17
_SYS_CLONE = 56  # x86_64; other architectures fall back to os.fork (reported)
_PR_SET_PDEATHSIG = 1
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
_SYS_CAPSET = 126
_AF_UNIX = 1

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


def _write_file(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _enter_user_namespace() -> None:
    uid, gid = os.getuid(), os.getgid()
    unshare(CLONE_NEWUSER)
    _write_file("/proc/self/setgroups", "deny")
    _write_file("/proc/self/uid_map", f"0 {uid} 1")
    _write_file("/proc/self/gid_map", f"0 {gid} 1")


def isolate_zygote(import_paths: list[str], hidden: list[str]) -> list[Layer]:
    """Put the calling (zygote) process into its own network, IPC and mount namespaces; report each layer.

    `hidden`: paths the root must not show (rootfs.hidden_paths)."""
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
        unshare(CLONE_NEWNET | CLONE_NEWIPC)
        layers.append(Layer("network", True, "new network namespace, no interfaces up"))
    except OSError as exc:
        layers.append(Layer("network", False, str(exc)))
    layers.append(_isolate_filesystem(import_paths, keep_proc=userns, hidden=hidden))
    return layers


def _isolate_filesystem(import_paths: list[str], keep_proc: bool, hidden: list[str]) -> Layer:
    try:
        shown, covered = rootfs.isolate_filesystem(import_paths, keep_proc, hidden)
        return Layer("filesystem", True, f"a read-only root of {len(shown)} paths (system libraries, the Python "
                                         f"installation and its import paths) with {len(covered)} dataset paths "
                                         "covered; fresh tmpfs /tmp, /dev/shm per run")
    except OSError as exc:
        return Layer("filesystem", False, str(exc))


def clone_run(namespaces: bool = True) -> int:
    """fork() into new PID, mount and IPC namespaces (or none): returns the pid like fork() does.

    A raw clone: the interpreter's fork hooks do not run (about 1 ms and 150 page faults less than os.fork), which
    is only safe in a single-threaded process. With namespaces the child is init of its PID namespace, so every
    process it leaves dies with it. Raises OSError when the kernel refuses; the zygote has checked at start
    (`probe_run_namespaces`) that it does not.
    """
    flags = _SIGCHLD | (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC if namespaces else 0)
    pid = int(pylibc.syscall(_SYS_CLONE, flags, 0, 0, 0, 0))
    if pid < 0:
        raise OSError(ctypes.get_errno(), f"clone: {os.strerror(ctypes.get_errno())}")
    return pid


def probe_run_namespaces(mount_run: Callable[[], str] | None = None) -> Layer:
    """Check once, in a throwaway clone, that per-run PID, mount and IPC namespaces work here and what `mount_run`
    (the per-run filesystems, see rootfs.py) gives /proc: the run's own, or an empty one the kernel left."""
    try:
        pid = clone_run()
    except OSError as exc:
        return Layer("pid_namespace", False, f"{exc}; runs are plain forks, killed by process group")
    if pid == 0:
        os._exit(_probe_exit(mount_run))
    _, status = os.waitpid(pid, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    detail = "each run is init of its own PID namespace, with its own IPC namespace"
    if code not in _PROBE_PROC:
        return Layer("pid_namespace", False, f"{detail}, but its filesystems could not be mounted (exit {code})")
    return Layer("pid_namespace", True, f"{detail}; /proc: {_PROBE_PROC[code]}")


_PROBE_PROC = {0: "its own", 3: "empty (the kernel refused a new proc mount here)"}


def _probe_exit(mount_run: Callable[[], str] | None) -> int:
    try:
        return 0 if mount_run is None or mount_run() == "own" else 3
    except BaseException:  # noqa: BLE001 - any failure is reported through the exit code
        return 4


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
    check(libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0), "prctl(PDEATHSIG)")  # set after setuid, which clears it


def _drop_capabilities() -> None:
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable x 2 words: all zero
    check(int(libc.syscall(_SYS_CAPSET, ctypes.byref(header), ctypes.byref(data))), "capset")


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_CMP_NE = 1
_SCMP_CMP_EQ = 4
_SCMP_CMP_MASKED_EQ = 7
_NON_STREAM_TYPES = (2, 3, 4, 5, 6, 10)  # SOCK_DGRAM, RAW, RDM, SEQPACKET, DCCP, PACKET
# fcntl commands that lock a file or watch one: F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK/SETLK/SETLKW, F_SETLEASE,
# F_NOTIFY. On a file of the shared read-only root (/etc/ld.so.cache) they would be a channel between two runs.
_LOCK_COMMANDS = (5, 6, 7, 36, 37, 38)
_WATCH_COMMANDS = (1024, 1026)


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
    check(-lib.seccomp_rule_add_array(ctx, ctypes.c_uint32(action), nr, len(cmps), array), f"seccomp {syscall}")


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
    _add_channel_rules(lib, ctx)
    # New namespaces through clone(); clone3 passes flags in memory seccomp cannot read, so make libc fall back.
    for flag in _CLONE_NS_FLAGS:
        _rule(lib, ctx, eperm, "clone", _ArgCmp(0, _SCMP_CMP_MASKED_EQ, flag, flag))
    _rule(lib, ctx, _scmp_errno(errno.ENOSYS), "clone3")


def _add_channel_rules(lib: ctypes.CDLL, ctx: ctypes.c_void_p) -> None:
    """No file locks and no file watches: concurrent runs share the read-only root, and a lock or an inotify watch
    on one of its files is a channel between them. A lock fails with ENOLCK (no locks available), as where the
    kernel has none; a watch with EPERM."""
    _rule(lib, ctx, _scmp_errno(errno.ENOLCK), "flock")
    for command in _LOCK_COMMANDS:
        _rule(lib, ctx, _scmp_errno(errno.ENOLCK), "fcntl", _ArgCmp(1, _SCMP_CMP_EQ, command, 0))
    for command in _WATCH_COMMANDS:
        _rule(lib, ctx, _scmp_errno(errno.EPERM), "fcntl", _ArgCmp(1, _SCMP_CMP_EQ, command, 0))
    for name in ("inotify_init", "inotify_init1"):
        _rule(lib, ctx, _scmp_errno(errno.EPERM), name)


def _export_bpf(lib: ctypes.CDLL, ctx: ctypes.c_void_p) -> bytes:
    read_fd, write_fd = os.pipe()
    try:
        check(-lib.seccomp_export_bpf(ctx, write_fd), "seccomp_export_bpf")
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
        check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._prog), 0, 0), "prctl(SECCOMP)")

