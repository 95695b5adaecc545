"""The replay's resource limits, apart from ``process`` so that every command's options can
name them without loading the process launcher (subprocess, threading, ctypes)."""

DEFAULT_MEMORY_MIB = 8192  # a replay's address-space limit (RLIMIT_AS; `ulimit -v` over ssh)
