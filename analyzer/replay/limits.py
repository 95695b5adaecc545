"""The replay's resource limits, apart from ``process`` so that every command's options can
name them without loading the process launcher (subprocess, threading, ctypes)."""

DEFAULT_MEMORY_MIB = 8192  # a replay's address-space limit (RLIMIT_AS; `ulimit -v` over ssh)


def address_space_limit(memory_mib: int | None, native: bool) -> int | None:
    """The address-space limit of one replay in MiB (None: none): ``--memory-limit`` when given; else
    ``DEFAULT_MEMORY_MIB`` for an emulated replay, and none for a native one. On a real GPU the CUDA
    driver reserves virtual address space far past any such cap when it starts (tens of GiB for an
    H200): under 8192 MiB torch found no CUDA device, and SGLang 0.5.23 stopped every launch with
    "No accelerator (CUDA, ...) is available" at get_device (three launches, natively on an H200)."""
    if memory_mib is not None:
        return memory_mib
    return None if native else DEFAULT_MEMORY_MIB
