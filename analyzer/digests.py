"""The two digests sgtrace's cache keys use, without loading OpenSSL.

``import hashlib`` loads ``_hashlib``, Python's bindings to OpenSSL: 9-11 ms of a warm
``explain`` (about 227 ms), for digests of sgtrace's own cache keys. CPython builds its own
implementations of SHA-256 (``_sha256``; ``_sha2`` from 3.12) and BLAKE2 (``_blake2``) into
every interpreter, and they give the same bytes; ``hashlib``'s are used where they are not there.
"""

from __future__ import annotations

try:
    from _sha2 import sha256  # type: ignore[import-not-found]  # (CPython 3.12 and later)
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # (CPython 3.11)
    except ImportError:
        from hashlib import sha256
try:
    from _blake2 import blake2b
except ImportError:
    from hashlib import blake2b

__all__ = ["blake2b", "sha256"]
