"""A small seccomp-BPF deny list, compiled by hand for bubblewrap's ``--seccomp FD``.

Sandboxed code runs as an unprivileged uid without capabilities, so most of
these calls would fail anyway; the filter removes kernel attack surface and
closes the channels that could outlive a session inside one warm worker
(keyrings, SysV IPC, ptrace of the zygote, new namespaces).
"""

from __future__ import annotations

import errno
import platform
import struct

# Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000

_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG0_LOW = 16  # little-endian low 32 bits of args[0]

_CLONE_NS_FLAGS = (
    0x00000080  # CLONE_NEWTIME
    | 0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)

# Denied syscall, then its number on x86_64 and aarch64 (kernel unistd tables).
_TABLE = """
ptrace              101  117
process_vm_readv    310  270
process_vm_writev   311  271
kcmp                312  272
pidfd_getfd         438  438
unshare             272   97
setns               308  268
mount               165   40
umount2             166   39
pivot_root          155   41
chroot              161   51
fsopen              430  430
fsconfig            431  431
fsmount             432  432
move_mount          429  429
open_tree           428  428
fspick              433  433
mount_setattr       442  442
open_by_handle_at   304  265
name_to_handle_at   303  264
keyctl              250  219
add_key             248  217
request_key         249  218
shmget               29  194
semget               64  190
msgget               68  186
mq_open             240  180
bpf                 321  280
perf_event_open     298  241
userfaultfd         323  282
io_uring_setup      425  425
io_uring_enter      426  426
io_uring_register   427  427
kexec_load          246  104
kexec_file_load     320  294
init_module         175  105
finit_module        313  273
delete_module       176  106
reboot              169  142
swapon              167  224
swapoff             168  225
acct                163   89
quotactl            179   60
syslog              103  116
settimeofday        164  170
clock_settime       227  112
adjtimex            159  171
clock_adjtime       305  266
lookup_dcookie      212   18
vhangup             153   58
clone                56  220
clone3              435  435
"""
_NUMBERS = {row.split()[0]: row.split()[1:] for row in _TABLE.strip().splitlines()}
DENIED = [name for name in _NUMBERS if name not in ("clone", "clone3")]
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {name: int(nums[0]) for name, nums in _NUMBERS.items()}),
    "aarch64": (0xC00000B7, {name: int(nums[1]) for name, nums in _NUMBERS.items()}),
}


def supported(machine: str | None = None) -> bool:
    """Whether a filter can be built for this CPU architecture."""
    return (machine or platform.machine()) in _ARCHES


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def build_filter(machine: str | None = None) -> bytes:
    """Return the compiled filter (an array of ``struct sock_filter``).

    Denied calls fail with EPERM; ``clone3`` fails with ENOSYS so libc falls
    back to ``clone``, whose namespace flags are checked; any other
    architecture (e.g. the x32 ABI) kills the process.

    Raises:
        ValueError: The architecture is not supported.
    """
    arch_name = machine or platform.machine()
    if arch_name not in _ARCHES:
        raise ValueError(f"no seccomp syscall table for architecture {arch_name!r}")
    audit_arch, numbers = _ARCHES[arch_name]
    deny_errno = _RET_ERRNO | errno.EPERM
    prog = [
        _insn(_LD_W_ABS, _OFF_ARCH),
        _insn(_JEQ_K, audit_arch, jt=1, jf=0),
        _insn(_RET_K, _RET_KILL_PROCESS),
        _insn(_LD_W_ABS, _OFF_NR),
    ]
    if arch_name == "x86_64":  # x32 syscalls carry bit 30
        prog += [_insn(_JGE_K, 0x40000000, jt=0, jf=1), _insn(_RET_K, deny_errno)]
    for name in DENIED:
        prog += [_insn(_JEQ_K, numbers[name], jt=0, jf=1), _insn(_RET_K, deny_errno)]
    prog += [
        _insn(_JEQ_K, numbers["clone3"], jt=0, jf=1),
        _insn(_RET_K, _RET_ERRNO | errno.ENOSYS),
        _insn(_JEQ_K, numbers["clone"], jt=0, jf=3),
        _insn(_LD_W_ABS, _OFF_ARG0_LOW),
        _insn(_JSET_K, _CLONE_NS_FLAGS, jt=0, jf=1),
        _insn(_RET_K, deny_errno),
        _insn(_RET_K, _RET_ALLOW),
    ]
    return b"".join(prog)
