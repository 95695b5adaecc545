"""Writing a fix into the user's unit or script (``--write``) without ever losing the file.

The bytes are read once, before the file is parsed (:func:`snapshot`); the
patch is made on those bytes, in the file's own line ends. :func:`write` then

1. opens the file and takes an exclusive ``flock`` on it (waiting at most
   ``LOCK_WAIT_S``; reopened if another writer renamed a new file in meanwhile),
2. checks that its content is still byte for byte the snapshot, and refuses
   otherwise (another ``fix --write``, an editor: line numbers would be stale),
3. copies the original to the first free ``FILE.bak``, ``FILE.bak.1``, ...,
4. writes the new content to a temporary file in the same folder, with the
   original's mode and owner, fsyncs it and renames it over the original
   (then fsyncs the folder).

Any OS error on the way (no space, no permission, a read-only file system)
leaves the original as it was, removes what was half made, and becomes a
one-line ``SgtraceError`` (exit 2). A symlink is followed: the file it names is
replaced, the link stays.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import stat
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import SgtraceError
from .inputs.textio import MAX_FILE_BYTES
from .safe_read import read_file

LOCK_WAIT_S = 60.0  # another writer holds the lock for milliseconds; past this it is not one of ours
MAX_BACKUPS = 1000


@dataclass(frozen=True)
class Snapshot:
    """A file's bytes as sgtrace read them, before parsing it."""

    path: Path  # as the user named it
    data: bytes

    @property
    def crlf(self) -> bool:
        """Whether the file's lines end in CRLF (every line end is one)."""
        return b"\r\n" in self.data and self.data.count(b"\r\n") == self.data.count(b"\n")

    @property
    def bom(self) -> bool:
        return self.data.startswith(b"\xef\xbb\xbf")

    def text(self) -> str:
        """The content with LF line ends and no byte-order mark (what the patch is made on)."""
        text = self.data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
        return text.replace("\r\n", "\n") if self.crlf else text

    def encode(self, text: str) -> bytes:
        """``text`` (as :meth:`text` gives it) back in the file's own line ends and byte-order mark."""
        if self.crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        return ("\ufeff" if self.bom else "").encode() + text.encode("utf-8", errors="surrogateescape")


def snapshot(path: str | os.PathLike) -> Snapshot | None:
    """The bytes of the regular file ``path`` (at most ``MAX_FILE_BYTES``), or None when it is not one
    or cannot be read (the input reader then says why in its own words)."""
    try:
        data = read_file(path, "file", MAX_FILE_BYTES)  # the one read function of every input (safe_read)
    except SgtraceError:
        return None
    return Snapshot(Path(path), data)


def _read_fd(fd: int) -> bytes | None:
    chunks, total = [], 0
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAX_FILE_BYTES:
            return None
        chunks.append(chunk)


def write(snap: Snapshot, new: bytes) -> Path:
    """Replace the file of ``snap`` by ``new`` as the module says; returns the backup's path."""
    shown = snap.path
    target = Path(os.path.realpath(snap.path))
    try:
        fd = _open_locked(target, shown)
    except OSError as exc:
        raise _failed(shown, exc) from None
    try:
        try:
            st = os.fstat(fd)
            current = _read_fd(fd)
        except OSError as exc:
            raise _failed(shown, exc) from None
        if current != snap.data:
            raise SgtraceError(f"{shown} changed since sgtrace read it: nothing written",
                               hint="run the command again on the file as it is now")
        backup = None
        try:
            backup = _backup(target, snap.data, st)
            _replace(target, new, st)
        except OSError as exc:
            if backup is not None:
                _unlink(backup)
            raise _failed(shown, exc) from None
        return backup
    finally:
        os.close(fd)  # and with it the lock


def _failed(path: Path, exc: OSError) -> SgtraceError:
    reason = exc.strerror or str(exc)
    hints = {
        errno.ENOSPC: "free some space on that file system",
        errno.EDQUOT: "free some space on that file system",
        errno.EACCES: "the file and its folder must be writable by you (the temporary file goes beside it)",
        errno.EPERM: "run as the file's owner (sgtrace keeps the file's owner and mode)",
        errno.EROFS: "the file is on a read-only file system: copy it, fix the copy, put it in place",
    }
    return SgtraceError(f"cannot write {path}: {reason}; the file is unchanged",
                        hint=hints.get(exc.errno, "check the path and its permissions"))


def _open_locked(target: Path, shown: Path) -> int:
    """An fd of ``target`` holding an exclusive flock, on the file that is at ``target`` now."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SgtraceError(f"{shown} is not a regular file: nothing written", hint="--write patches a unit or script file")
            _flock(fd, max(0.0, deadline - time.monotonic()), shown)
            now, held = os.stat(target), os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            return fd
        os.close(fd)  # another writer renamed a new file into place while we waited: lock that one


class _LockTimeout(Exception):
    pass


def _flock(fd: int, wait_s: float, shown: Path) -> None:
    """Take LOCK_EX on ``fd``, waiting at most ``wait_s``."""
    busy = SgtraceError(f"{shown} is locked by another process: nothing written",
                        hint="another `sgtrace fix --write` is writing it; run again when it is done")
    if threading.current_thread() is not threading.main_thread():
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise busy from None
                time.sleep(0.05)

    def on_alarm(signum, frame):
        raise _LockTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(wait_s, 0.001))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a blocking wait (visible as such in /proc/locks)
    except _LockTimeout:
        raise busy from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _write_synced(fd: int, data: bytes, st: os.stat_result, strict_owner: bool) -> None:
    """All of ``data`` into ``fd`` with the original's mode and owner, on disk, then closed."""
    try:
        _write_all(fd, data)
        os.fchmod(fd, stat.S_IMODE(st.st_mode))
        _keep_owner(fd, st, strict=strict_owner)
        os.fsync(fd)
    finally:
        os.close(fd)


def _backup(target: Path, data: bytes, st: os.stat_result) -> Path:
    """The original bytes in the first free FILE.bak, FILE.bak.1, ... (created exclusively)."""
    for n in range(MAX_BACKUPS):
        path = target.with_name(target.name + (".bak" if n == 0 else f".bak.{n}"))
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileExistsError:
            continue
        try:
            _write_synced(fd, data, st, strict_owner=False)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        except BaseException:
            _unlink(path)
            raise
        return path
    raise OSError(errno.EEXIST, f"{target.name}.bak to .bak.{MAX_BACKUPS - 1} all exist")


def _replace(target: Path, data: bytes, st: os.stat_result) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".sgtrace-tmp", dir=target.parent)
    try:
        _write_synced(fd, data, st, strict_owner=True)
        os.rename(tmp, target)
    except BaseException:
        _unlink(Path(tmp))
        raise
    _fsync_dir(target.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _keep_owner(fd: int, st: os.stat_result, *, strict: bool) -> None:
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (st.st_uid, st.st_gid):
        return
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:
        if strict:
            raise


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not sync folders; the rename is done
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


__all__ = ["LOCK_WAIT_S", "Snapshot", "snapshot", "write"]
