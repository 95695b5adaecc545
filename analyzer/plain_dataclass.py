"""``plain_dataclass``: ``dataclasses.dataclass`` for a class made a few times a run, with no methods compiled for it.

``dataclasses.dataclass`` writes each method it adds (``__init__``, ``__repr__``, ``__eq__``, and for a
frozen class ``__setattr__``, ``__delattr__``, ``__hash__``) as source text and compiles it: 0.3 to 1 ms a
class, about 35 ms of a warm ``sgtrace explain`` of P1 (87 classes, 66 of them made fewer than fifty times
in the run and 28 never). ``plain_dataclass`` has ``dataclasses`` do all the rest (the fields, with their
defaults and factories; ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass``;
``__match_args__``) and gives the class the same methods, written once here for every class: they read the
fields the class was decorated with. The class behaves as the ``dataclass`` of the same arguments: the
same ``__init__`` parameters (each field with ``init``, in order, with its default or factory), assignment
(``object.__setattr__`` for a frozen class), ``__post_init__``, ``repr`` (``repr=False`` fields left out,
``...`` for a value that contains itself), equality (same class, ``compare`` fields as a tuple), hashing
(a frozen class with equality hashes its ``compare`` fields; one with equality that is not frozen is
unhashable; a ``__hash__`` of the class's own is kept) and ``FrozenInstanceError``; a method the class
defines itself is kept. Constructing one costs a few microseconds more: a class made thousands of times a
run (the extraction's sites and guards, the evaluator's objects, the trace's events) keeps ``dataclass``.

Only what sgtrace's classes use is offered (``frozen``, ``eq``); ``order``, ``slots``, ``kw_only`` and
``InitVar`` are refused when the class is decorated.
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import Any, Callable, TypeVar, dataclass_transform, overload

_T = TypeVar("_T", bound=type)
_MISSING = dataclasses.MISSING


@overload
def plain_dataclass(cls: _T, /) -> _T: ...


@overload
def plain_dataclass(*, frozen: bool = False, eq: bool = True) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def plain_dataclass(cls: Any = None, /, *, frozen: bool = False, eq: bool = True) -> Any:
    """``@dataclass``, ``@dataclass(frozen=True)`` or ``@dataclass(eq=False)``, without a compiled method."""
    def wrap(cls: _T) -> _T:
        return _make(cls, frozen, eq)
    return wrap if cls is None else wrap(cls)


def _make(cls: _T, frozen: bool, eq: bool) -> _T:
    own = dict(cls.__dict__)
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    frozen_base = False
    for base in cls.__mro__[1:]:
        params = base.__dict__.get("__dataclass_params__")
        if params is not None:
            if params.frozen != frozen:
                raise TypeError(f"{cls.__qualname__}: a {'frozen' if frozen else 'non-frozen'} dataclass cannot inherit from "
                                f"a {'frozen' if params.frozen else 'non-frozen'} one")
            frozen_base = frozen_base or params.frozen
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"{cls.__qualname__}: a frozen dataclass cannot define __setattr__ or __delattr__")
    # below a frozen dataclass, dataclasses itself writes the frozen class's __setattr__ and __delattr__
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=frozen_base)
    params = cls.__dict__["__dataclass_params__"]
    params.init, params.repr, params.eq, params.frozen = True, True, eq, frozen  # what the class now offers
    fields = list(dataclasses.fields(cls))
    real = {f.name for f in fields}
    for name, pseudo in cls.__dict__["__dataclass_fields__"].items():
        if name not in real and "InitVar" in str(pseudo.type):  # (the others are ClassVars)
            raise TypeError(f"{cls.__qualname__}.{name}: InitVar is not offered by plain_dataclass")
    if any(f.kw_only is True for f in fields):
        raise TypeError(f"{cls.__qualname__}: kw_only is not offered by plain_dataclass")
    _set(cls, own, "__init__", _init_of(cls, fields, frozen))
    _set(cls, own, "__repr__", _repr_of(fields))
    if eq:
        _set(cls, own, "__eq__", _eq_of(fields))
        if not explicit_hash:
            cls.__hash__ = _hash_of(cls, fields) if frozen else None  # type: ignore[assignment,method-assign]
    if frozen and not frozen_base:
        cls.__setattr__ = _frozen_setattr_of(cls, fields)  # type: ignore[method-assign]
        cls.__delattr__ = _frozen_delattr_of(cls, fields)  # type: ignore[method-assign]
    if not own.get("__doc__"):  # dataclasses read the signature before there was an __init__
        cls.__doc__ = f"{cls.__name__}({', '.join(f.name for f in fields if f.init)})"
    return cls


def _set(cls: type, own: dict, name: str, method: Callable) -> None:
    """A method the class does not define itself (``dataclass`` keeps a class's own)."""
    if name not in own:
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)


def _init_of(cls: type, fields: list, frozen: bool) -> Callable:
    params = [f for f in fields if f.init]
    names = tuple(f.name for f in params)
    seen_default = False
    for f in params:
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has_default
    required = tuple(f.name for f in params if f.default is _MISSING and f.default_factory is _MISSING)
    # what __init__ assigns, in the fields' order: each argument (else its default or factory), and the
    # factory of each field outside __init__ (one outside it with a plain default keeps the class's)
    plan = tuple((f.name, f.init, f.default, f.default_factory) for f in fields if f.init or f.default_factory is not _MISSING)
    assign = object.__setattr__ if frozen else setattr
    post_init = hasattr(cls, "__post_init__")
    qualname = f"{cls.__qualname__}.__init__"
    most = len(names) + 1
    takes = f"{most}" if len(required) == len(names) else f"from {len(required) + 1} to {most}"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{qualname}() takes {takes} positional arguments but {len(args) + 1} were given")
        values = dict(zip(names, args))
        for name, value in kwargs.items():
            if name not in names:
                raise TypeError(f"{qualname}() got an unexpected keyword argument {name!r}")
            if name in values:
                raise TypeError(f"{qualname}() got multiple values for argument {name!r}")
            values[name] = value
        if len(values) < len(names):
            missing = [repr(name) for name in required if name not in values]
            if missing:
                listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
                raise TypeError(f"{qualname}() missing {len(missing)} required positional argument"
                                f"{'s' if len(missing) > 1 else ''}: {listed}")
        for name, in_init, default, factory in plan:
            if in_init and name in values:
                assign(self, name, values[name])
            else:
                assign(self, name, factory() if factory is not _MISSING else default)
        if post_init:
            self.__post_init__()

    return __init__


def _repr_of(fields: list) -> Callable:
    shown = tuple(f.name for f in fields if f.repr)

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in shown) + ")"

    return __repr__


def _eq_of(fields: list) -> Callable:
    compared = tuple(f.name for f in fields if f.compare)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n) for n in compared)
        return NotImplemented

    return __eq__


def _hash_of(cls: type, fields: list) -> Callable:
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in hashed))

    return __hash__


def _frozen_setattr_of(cls: type, fields: list) -> Callable:
    names = frozenset(f.name for f in fields)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    __setattr__.__qualname__ = f"{cls.__qualname__}.__setattr__"
    return __setattr__


def _frozen_delattr_of(cls: type, fields: list) -> Callable:
    names = frozenset(f.name for f in fields)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    __delattr__.__qualname__ = f"{cls.__qualname__}.__delattr__"
    return __delattr__
