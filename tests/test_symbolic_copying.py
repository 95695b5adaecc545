"""The engine's fast paths give what the slow ones gave: ``copying.deep_copy`` is ``copy.deepcopy``, and the
items form of ``memo.fingerprint`` tells apart exactly what the item-by-item form did."""

from __future__ import annotations

import copy

from analyzer.symbolic.copying import deep_copy
from analyzer.symbolic.memo import Unsupported, fingerprint
from analyzer.symbolic.objects import ClassRef, Instance, Stash
from analyzer.contracts.trace import Unknown


def test_deep_copy_is_copy_deepcopy():
    shared = [1, {"k": None}]
    data = {"a": [1, 2.5, {"b": None, "c": (1, [2])}], "s": shared, "t": shared, "u": Unknown("why"),
            "i": Instance(ClassRef("m.py", "C"), {"k": [1]}), 1: {True: b"x"}, "f": -0.0}
    copied, reference = deep_copy(data), copy.deepcopy(data)
    assert copied["s"] is copied["t"] and copied["s"] is not shared  # sharing kept, as deepcopy keeps it
    assert repr({k: v for k, v in copied.items() if k not in ("u", "i")}) == repr({k: v for k, v in reference.items() if k not in ("u", "i")})
    assert copied["a"][2]["c"][1] is not data["a"][2]["c"][1]
    assert copied["i"] is not data["i"] and copied["i"].attrs == {"k": [1]} and copied["i"].attrs["k"] is not data["i"].attrs["k"]
    assert type(copied["u"]) is Unknown and copied["u"] is not data["u"] and copied["u"].reason == "why"
    looped: list = []
    looped.append(looped)
    again = deep_copy(looped)
    assert again[0] is again


def test_fingerprint_forms_tell_apart_what_the_item_by_item_form_did():
    assert fingerprint([0.0]) != fingerprint([-0.0]) and fingerprint({"a": 0.0}) != fingerprint({"a": -0.0})
    assert fingerprint([1]) != fingerprint([True]) != fingerprint([1.0])
    assert fingerprint({1: 1}) != fingerprint({True: 1})
    assert fingerprint([None, [1]]) != fingerprint([[1], None]) and fingerprint([None]) != fingerprint([[]])
    assert fingerprint({"a": Unknown("r"), "b": 1}) == fingerprint({"a": Unknown("r"), "b": 1})
    assert fingerprint({"a": Unknown("r")}) != fingerprint({"a": Unknown("s")})
    assert fingerprint(Stash([("s", {"a": 1})])) == fingerprint(Stash([("s", {"a": 1})]))
    assert fingerprint([float("nan")]) == fingerprint([float("nan")])  # (NaN is not equal to itself: the repr is)
    try:
        fingerprint([1, object()])
    except Unsupported:
        pass
    else:
        raise AssertionError("an object the memo cannot compare was fingerprinted")
