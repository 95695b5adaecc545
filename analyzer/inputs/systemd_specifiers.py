"""systemd's ``%`` specifiers, answered as the service manager that loads the unit would (systemd.unit(5)).

- From the unit's name: ``%n %N %p %P %i %I %j %J %f`` (``%I %P %J %f``
  unescaped: ``-`` is ``/``, ``\\xNN`` a character), and ``%%``.
- From the service manager: a unit under a ``systemd/user`` folder is loaded
  by the user's manager, any other by the system manager. The system manager
  runs as root: ``%u`` is ``root``, ``%U`` ``0``, ``%h`` ``/root``, ``%s``
  ``/bin/sh``, ``%g`` ``root``, ``%G`` ``0`` whatever ``User=`` says (systemd
  does not take ``User=`` into account), and the folders are fixed (``%t``
  ``/run``, ``%S`` ``/var/lib``, ``%C`` ``/var/cache``, ``%L`` ``/var/log``,
  ``%E`` ``/etc``, ``%T`` ``/tmp``, ``%V`` ``/var/tmp``, ``%d`` the unit's
  credentials folder). A user manager answers for its user: the user running
  sgtrace on this machine and its XDG folders, which each note says.
- From the host the unit runs on (``%H %l %m %b %v %a %o %w %W %A %B %M %q
  %y %Y``): not known here; kept as written, with a note.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from ..plain_dataclass import plain_dataclass

HOST_SPECIFIERS = frozenset("HlmbvaowWABMqyY")
_USER_SPECIFIERS = frozenset("uUhsgG")
_HEX_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")


@plain_dataclass(frozen=True)
class Specifiers:
    """The value of each specifier the manager resolves, and what answered the manager-dependent ones."""

    values: Mapping[str, str]
    notes: Mapping[str, str] = field(default_factory=dict)  # letter -> why it has this value


def unescape(text: str) -> str:
    """systemd's ``unit_name_unescape``: ``-`` is ``/``, ``\\xNN`` the character NN."""
    return _HEX_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text.replace("-", "/"))


def is_user_unit(unit: str | Path) -> bool:
    """A unit in a user unit folder (``~/.config/systemd/user``, ``/etc/systemd/user``, ...)."""
    return "systemd/user" in Path(os.path.abspath(unit)).parent.as_posix() + "/"


def for_unit(unit: str | Path) -> Specifiers:
    """The specifiers of the unit file at ``unit`` (its name, and the manager its folder says)."""
    name = Path(unit).name
    values = _name_values(name)
    manager = _user_manager(name) if is_user_unit(unit) else _system_manager(name)
    return Specifiers({**values, **manager.values}, manager.notes)


def _name_values(unit_name: str) -> dict[str, str]:
    stem = unit_name.rsplit(".", 1)[0]
    prefix, _, instance = stem.partition("@")
    last = prefix.rsplit("-", 1)[-1]
    path = "/" + (unescape(instance) if instance else unescape(prefix)).lstrip("/")
    return {
        "%": "%", "n": unit_name, "N": stem, "p": prefix, "P": unescape(prefix), "i": instance,
        "I": unescape(instance), "j": last, "J": unescape(last), "f": path,
    }  # fmt: skip


def _system_manager(unit_name: str) -> Specifiers:
    values = {
        "u": "root", "U": "0", "h": "/root", "s": "/bin/sh", "g": "root", "G": "0",
        "t": "/run", "S": "/var/lib", "C": "/var/cache", "L": "/var/log", "E": "/etc", "D": "/usr/share",
        "T": "/tmp", "V": "/var/tmp", "d": f"/run/credentials/{unit_name}",
    }  # fmt: skip
    why = "that of the system service manager, which runs as root (systemd does not take User= into account)"
    return Specifiers(values, {letter: why for letter in _USER_SPECIFIERS})


def _user_manager(unit_name: str) -> Specifiers:
    import grp  # POSIX only
    import pwd  # POSIX only

    user = pwd.getpwuid(os.getuid())
    try:
        group = grp.getgrgid(user.pw_gid).gr_name
    except KeyError:
        group = str(user.pw_gid)
    home = user.pw_dir
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{user.pw_uid}"
    state = os.environ.get("XDG_STATE_HOME") or f"{home}/.local/state"
    temp = os.environ.get("TMPDIR") or os.environ.get("TEMP") or os.environ.get("TMP") or "/tmp"
    values = {
        "u": user.pw_name, "U": str(user.pw_uid), "h": home, "s": user.pw_shell or "/bin/sh",
        "g": group, "G": str(user.pw_gid), "t": runtime, "S": state, "L": f"{state}/log",
        "C": os.environ.get("XDG_CACHE_HOME") or f"{home}/.cache",
        "E": os.environ.get("XDG_CONFIG_HOME") or f"{home}/.config",
        "D": os.environ.get("XDG_DATA_HOME") or f"{home}/.local/share",
        "T": temp, "V": temp, "d": f"{runtime}/credentials/{unit_name}",
    }  # fmt: skip
    why = f"that of the user unit's manager, answered by this machine's user {user.pw_name}"
    return Specifiers(values, {letter: why for letter in values if letter not in "%"})
