"""Write confinement of a candidate's worker by Landlock, the Linux kernel's unprivileged sandbox (5.13 and later).

:func:`restrict_writes` takes from the calling thread, and from every thread and process it starts afterwards,
the right to create, write, truncate, rename or remove anything outside the folders it is given. Reading and
executing stay as they were: a worker still imports torch, reads its problem and runs compilers. The kernel
enforces it, so neither Python code nor ``ctypes`` inside the worker can lift it, and it needs no root, no
second user and no namespace. Landlock confines threads, not processes: a thread that existed before the call
keeps its rights, so the worker confines each of its own threads (``_isolation``) before candidate code runs.
From ABI 6 the same rules can refuse signals sent to any process outside the confined ones (the runner).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable
from pathlib import Path

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
"""Landlock's system call numbers, the same on every Linux architecture."""
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

WRITE_FILE, REMOVE_DIR, REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = (1 << n for n in range(6, 13))
REFER, TRUNCATE = 1 << 13, 1 << 14
"""Landlock's filesystem rights that change something (reading, listing and executing are not among them)."""
_FILE_RIGHTS = WRITE_FILE | TRUNCATE
"""The rights a rule on a single file may grant."""
SCOPE_SIGNAL = 1 << 1
"""Landlock's scope (ABI 6 and later) that refuses signals to processes outside the confined ones."""


def _rights(abi: int) -> int:
    rights = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
              | MAKE_BLOCK | MAKE_SYM)
    if abi >= 2:
        rights |= REFER  # linking or renaming a file into another folder
    if abi >= 3:
        rights |= TRUNCATE
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """Landlock's ABI version in this kernel; 0 where it has none or it is switched off."""
    try:
        version = int(_libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG)))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def unavailable() -> str | None:
    """Why writes cannot be confined here (None where they can)."""
    if abi() < 1:
        return "this kernel has no Landlock (Linux 5.13 or later with landlock among its security modules)"
    return None


def scopes_signals() -> bool:
    """Whether this kernel's Landlock can also refuse signals to processes outside the confined ones."""
    return abi() >= 6


def _fail(what: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"Landlock {what}: {os.strerror(errno)}")


def restrict_writes(writable: Iterable[str | os.PathLike[str]], scope_signals: bool = False) -> None:
    """Confine the calling thread's writes to ``writable`` (folders, with everything beneath them, or files), and
    with ``scope_signals``, where the kernel can (:func:`scopes_signals`), its signals to the processes it confines.

    Paths that do not exist are left out (nothing can be made there). Raises :class:`OSError` where the
    kernel has no Landlock or refuses the rules: the caller decides whether to run unconfined.
    """
    version = abi()
    if version < 1:
        raise OSError(unavailable())
    libc = _libc()
    rights = _rights(version)
    scoped = SCOPE_SIGNAL if scope_signals and version >= 6 else 0
    attr = _RulesetAttr(handled_access_fs=rights, handled_access_net=0, scoped=scoped)
    size = ctypes.sizeof(attr) if scoped else 8  # kernels before ABI 4 know only the first field
    ruleset = int(libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)))
    if ruleset < 0:
        raise _fail("create_ruleset")
    try:
        for path in dict.fromkeys(Path(p) for p in writable):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                allowed = rights if path.is_dir() else rights & _FILE_RIGHTS
                rule = _PathBeneath(allowed_access=allowed, parent_fd=fd)
                if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise _fail(f"add_rule({path})")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _fail("no_new_privs")
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise _fail("restrict_self")
    finally:
        os.close(ruleset)
