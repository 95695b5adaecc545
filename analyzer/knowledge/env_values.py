"""How SGLang reads the value of an env var it declares in ``environ.py``: the declaring class
(``EnvBool``, ``EnvInt``, ``EnvFloat``...) converts the raw string. Used by the symbolic engine
(``envs.X.get()``) and by the flag table (choices SGLang adds when an env var is on)."""

from __future__ import annotations

from typing import Any

from ..contracts.trace import Unknown

ENV_TRUE = ("1", "true", "yes", "y", "on")


def convert(raw: str, kind: str | None) -> Any:
    """The value ``envs.NAME.get()`` returns for the raw string ``raw`` of a variable declared as ``kind``."""
    if kind in ("EnvBool", "EnvBoolWithAlias"):
        return raw.strip().lower() in ENV_TRUE
    if kind in ("EnvInt", "EnvIntWithAlias"):
        try:
            return int(raw)
        except ValueError:
            return Unknown(f"env value {raw!r} is not an int")
    if kind in ("EnvFloat",):
        try:
            return float(raw)
        except ValueError:
            return Unknown(f"env value {raw!r} is not a float")
    return raw


def is_on(name: str, env: dict[str, str] | None, defaults: dict[str, Any], types: dict[str, str]) -> bool:
    """Whether ``envs.NAME.get()`` (or ``get_bool_env_var("NAME")``) is truthy for ``env``: the raw
    value converted as declared, else the declared default."""
    if env and name in env:
        return convert(env[name], types.get(name) or "EnvBool") is True
    return defaults.get(name) is True
