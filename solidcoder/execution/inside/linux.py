"""Thin ctypes wrappers over the Linux calls the sandbox makes: unshare, mount and the new mount API, pivot_root.

Each raises OSError naming the call when the kernel refuses. Nothing here decides policy (see isolation.py and
rootfs.py).
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
_SYS_PIVOT_ROOT = 155
_SYS_OPEN_TREE = 428
_SYS_MOVE_MOUNT = 429
_SYS_MOUNT_SETATTR = 442
_OPEN_TREE_CLONE = 1
_MOVE_MOUNT_F_EMPTY_PATH = 4
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1
_MNT_DETACH = 2

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# PyDLL keeps the GIL held across the call: a raw clone() must not happen while another thread could run.
pylibc = ctypes.PyDLL(None, use_errno=True)
pylibc.syscall.restype = ctypes.c_long


def check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    check(libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    fs = fstype.encode() if fstype else None
    opts = data.encode() if data else None
    check(libc.mount(source.encode(), target.encode(), fs, ctypes.c_ulong(flags), opts), f"mount {target}")


def open_tree(path: str) -> int:
    """A detached recursive copy of the mount tree at `path` (attach it with `attach`)."""
    fd = int(libc.syscall(_SYS_OPEN_TREE, -100, path.encode(), _OPEN_TREE_CLONE | _AT_RECURSIVE | os.O_CLOEXEC))
    if fd < 0:
        check(fd, f"open_tree {path}")
    return fd


def attach(tree_fd: int, target: str, is_dir: bool) -> None:
    """Attach a detached mount tree (from open_tree) at `target`, creating the mountpoint; closes the fd."""
    os.makedirs(target if is_dir else os.path.dirname(target), mode=0o755, exist_ok=True)
    if not is_dir:
        open(target, "a").close()
    res = libc.syscall(_SYS_MOVE_MOUNT, tree_fd, b"", -100, target.encode(), _MOVE_MOUNT_F_EMPTY_PATH)
    os.close(tree_fd)
    check(int(res), f"move_mount {target}")


def make_read_only(path: str) -> None:
    """Every mount at and under `path` read-only (mount_setattr, recursive)."""
    attr = (ctypes.c_uint64 * 4)(_MOUNT_ATTR_RDONLY, 0, 0, 0)  # struct mount_attr {set, clr, propagation, userns}
    res = libc.syscall(_SYS_MOUNT_SETATTR, -100, path.encode(), _AT_RECURSIVE, ctypes.byref(attr),
                       ctypes.sizeof(attr))
    check(int(res), f"mount_setattr({path}, read-only)")


def pivot_into(root: str) -> None:
    """Make `root` the root of this mount namespace and drop the old one."""
    os.chdir(root)
    check(int(libc.syscall(_SYS_PIVOT_ROOT, b".", b".")), "pivot_root")
    check(libc.umount2(b".", _MNT_DETACH), "umount the old root")
    os.chdir("/")
    mount("none", "/", None, MS_REC | MS_PRIVATE)
