"""How SGLang reads the value of an env var it declares in ``environ.py``: the declaring class
(``EnvBool``, ``EnvInt``, ``EnvFloat``...) converts the raw string. Used by the symbolic engine
(``envs.X.get()``) and by the flag table (choices SGLang adds when an env var is on)."""

from __future__ import annotations

from typing import Any


# ``EnvBool.parse`` (every release with ``environ.py``): the lower-cased text, not stripped; anything else is refused
ENV_TRUE = ("true", "1", "yes", "y")
ENV_FALSE = ("false", "0", "no", "n")
# ``utils.get_bool_env_var`` (every release): true for these alone, anything else false (after a warning)
BOOL_ENV_VAR_TRUE = ("true", "1")


def convert(raw: str, kind: str | None, default: Any = None) -> Any:
    """The value ``envs.NAME.get()`` returns for the raw string ``raw`` of a variable declared as ``kind``: a value its
    class refuses (``EnvBool`` of "on", ``EnvInt`` of "4k") is the declared ``default``, as ``EnvField.get`` returns
    it after its warning."""
    if kind in ("EnvBool", "EnvBoolWithAlias"):
        value = raw.lower()
        if value in ENV_TRUE:
            return True
        return False if value in ENV_FALSE else default
    if kind in ("EnvInt", "EnvIntWithAlias"):
        try:
            return int(raw)
        except ValueError:
            return default
    if kind in ("EnvFloat",):
        try:
            return float(raw)
        except ValueError:
            return default
    return raw


def is_on(name: str, env: dict[str, str] | None, defaults: dict[str, Any], types: dict[str, str]) -> bool:
    """Whether ``envs.NAME.get()`` (or ``get_bool_env_var("NAME")``) is truthy for ``env``: the raw
    value converted as declared, else the declared default."""
    if env and name in env:
        return convert(env[name], types.get(name) or "EnvBool", defaults.get(name)) is True
    return defaults.get(name) is True
