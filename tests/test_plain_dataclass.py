"""``plain_dataclass`` behaves as ``dataclasses.dataclass`` of the same arguments: each class here is built twice from
one body, once by each, and every behaviour the analyzer relies on is compared between the two."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import field

import pytest

from analyzer.plain_dataclass import plain_dataclass


def _body() -> dict:
    """A class body with every kind of field sgtrace's classes have (fresh Field objects each time)."""
    return {
        "__annotations__": {"name": "str", "count": "int", "tags": "list", "note": "str", "cache": "dict",
                            "hidden": "str", "loose": "int", "fixed": "str"},
        "count": 1,
        "tags": field(default_factory=list),
        "note": field(default="n", repr=False),
        "cache": field(default_factory=dict, init=False),
        "hidden": field(default="h", compare=False),
        "loose": field(default=0, hash=False),
        "fixed": field(default="f", init=False),
        "__doc__": "A test class.",
    }


def _pair(**options) -> tuple[type, type]:
    made = []
    for decorate in (dataclasses.dataclass, plain_dataclass):
        cls = type("Sample", (), _body())
        made.append(decorate(**options)(cls))
    return made[0], made[1]


def _outcome(call):
    try:
        value = call()
    except Exception as exc:  # noqa: BLE001  the exception itself is what is compared
        return ("raises", type(exc).__name__, str(exc).replace("__create_fn__.<locals>.", ""))
    return ("value", value)


OPTIONS = [{}, {"frozen": True}, {"eq": False}, {"frozen": True, "eq": False}]
CALLS = [
    ((), {}),
    (("a",), {}),
    (("a", 2, [1]), {}),
    (("a",), {"count": 3, "note": "x", "hidden": "y", "loose": 5}),
    (("a", 2, [1], "x", "y", 5), {}),
    (("a", 2, [1], "x", "y", 5, 6), {}),
    (("a",), {"name": "b"}),
    (("a",), {"nope": 1}),
    ((), {"count": 2}),
    (("a",), {"cache": {}}),
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "plain")
def test_the_same_class_as_dataclass_makes(options):
    real, plain = _pair(**options)
    assert [(f.name, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash) for f in dataclasses.fields(plain)] == \
        [(f.name, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash) for f in dataclasses.fields(real)]
    assert plain.__match_args__ == real.__match_args__
    assert dataclasses.is_dataclass(plain)
    assert plain.__doc__ == real.__doc__
    assert (plain.__dataclass_params__.frozen, plain.__dataclass_params__.eq) == (real.__dataclass_params__.frozen, real.__dataclass_params__.eq)
    assert (plain.__hash__ is None) == (real.__hash__ is None)
    for args, kwargs in CALLS:
        _same_instances(real, plain, args, kwargs)


def _same_instances(real: type, plain: type, args: tuple, kwargs: dict) -> None:
    made_real, made_plain = _outcome(lambda: real(*args, **kwargs)), _outcome(lambda: plain(*args, **kwargs))
    assert made_plain[0] == made_real[0], (args, kwargs)
    if made_real[0] == "raises":
        assert made_plain == made_real
        return
    a, b = made_real[1], made_plain[1]
    assert repr(b) == repr(a)
    assert vars(b) == vars(a)
    assert dataclasses.asdict(b) == dataclasses.asdict(a)
    assert _outcome(lambda: hash(b) == hash(plain(*args, **kwargs)))[0] == _outcome(lambda: hash(a) == hash(real(*args, **kwargs)))[0]
    assert (b == plain(*args, **kwargs)) == (a == real(*args, **kwargs))
    assert (b == dataclasses.replace(b, hidden="other")) == (a == dataclasses.replace(a, hidden="other"))
    assert (b == dataclasses.replace(b, count=99)) == (a == dataclasses.replace(a, count=99))
    assert (b == a) is False  # another class: never equal
    assert b.tags is not plain(*args, **kwargs).tags or "tags" in kwargs or len(args) > 2  # a factory per instance
    assert repr(copy.deepcopy(b)) == repr(b) and repr(copy.copy(b)) == repr(b)
    assert _outcome(lambda: setattr(b, "count", 5))[0::2] == _outcome(lambda: setattr(a, "count", 5))[0::2]
    assert _outcome(lambda: setattr(b, "other", 5))[0::2] == _outcome(lambda: setattr(a, "other", 5))[0::2]
    assert _outcome(lambda: delattr(b, "name"))[0::2] == _outcome(lambda: delattr(a, "name"))[0::2]


def test_frozen_hash_reads_the_compared_fields_only():
    def body() -> dict:
        return {"__annotations__": {"name": "str", "hidden": "str", "loose": "int"},
                "hidden": field(default="h", compare=False), "loose": field(default=0, hash=False)}

    real = dataclasses.dataclass(frozen=True)(type("Hashed", (), body()))
    plain = plain_dataclass(frozen=True)(type("Hashed", (), body()))
    assert hash(plain("a", hidden="x")) == hash(plain("a", hidden="y"))
    assert hash(plain("a", loose=1)) == hash(plain("a", loose=2))
    assert hash(plain("a")) != hash(plain("b"))
    assert hash(plain("a", "x", 1)) == hash(real("a", "y", 2))  # the same tuple of fields


def test_a_method_of_the_class_is_kept_and_post_init_runs():
    seen = []

    def body() -> dict:
        out = _body()
        out["__repr__"] = lambda self: "mine"
        out["__eq__"] = lambda self, other: True
        out["__hash__"] = lambda self: 7
        out["__post_init__"] = lambda self: seen.append(self.name)
        return out

    for decorate in (dataclasses.dataclass(frozen=True), plain_dataclass(frozen=True)):
        cls = decorate(type("Own", (), body()))
        made = cls("z")
        assert (repr(made), made == 3, hash(made)) == ("mine", True, 7)
    assert seen == ["z", "z"]


def test_a_value_that_contains_itself_repr_as_dataclass_does():
    real, plain = _pair()
    a, b = real("a"), plain("a")
    a.tags.append(a)
    b.tags.append(b)
    assert repr(b) == repr(a)


def test_inheritance_as_dataclass():
    @plain_dataclass(frozen=True)
    class Base:
        a: int

    @plain_dataclass(frozen=True)
    class Child(Base):
        b: int = 2

    @dataclasses.dataclass(frozen=True)
    class RealChild(Base):
        c: int = 3

    assert repr(Child(1)) == "test_inheritance_as_dataclass.<locals>.Child(a=1, b=2)"
    assert repr(RealChild(1)) == "test_inheritance_as_dataclass.<locals>.RealChild(a=1, c=3)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        Child(1).a = 2
    with pytest.raises(TypeError):
        plain_dataclass(type("Thawed", (Base,), {"__annotations__": {"d": "int"}, "d": 1}))
    with pytest.raises(TypeError):
        dataclasses.dataclass(type("Thawed", (Base,), {"__annotations__": {"d": "int"}, "d": 1}))


def test_what_it_does_not_offer_is_refused():
    with pytest.raises(TypeError, match="InitVar"):
        plain_dataclass(type("WithInitVar", (), {"__annotations__": {"a": "dataclasses.InitVar[int]"}}))
    with pytest.raises(TypeError, match="kw_only"):
        plain_dataclass(type("KwOnly", (), {"__annotations__": {"a": "int"}, "a": field(kw_only=True)}))
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        plain_dataclass(type("Order", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))
