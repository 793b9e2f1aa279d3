"""Encoded values: the only thing either engine compares."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from autograder.cases.codec import EncodeError, decode, encode, outcome_of
from autograder.cases.compare import close, same_outcome
from autograder.cases.spec import Fn, Obj


def test_float_subclass_cannot_lie_through_dunder_float():
    """Does a float subclass with a lying __float__ / __eq__ encode as its real value?"""

    class Liar(float):
        def __float__(self):
            return 0.368064

        def __eq__(self, other):
            return True

        __hash__ = float.__hash__

    assert encode(Liar(5.0)) == 5.0
    assert not close(0.368064, encode(Liar(5.0)), 1e-9, 1e-12)


def test_objects_without_a_plain_form_are_rejected():
    """Does a learner's custom object (e.g. with a lying __eq__) fail to encode instead of passing?"""

    class AlwaysEqual:
        def __eq__(self, other):
            return True

    with pytest.raises(EncodeError):
        encode(AlwaysEqual())
    out = outcome_of(lambda: AlwaysEqual(), [], {"$dict": {}}, {})
    assert out["raised"] == "UnsupportedReturn"


def test_nan_and_inf_round_trip_and_compare():
    """Are NaN and ±inf encoded as JSON-safe tags and compared exactly?"""
    assert encode(float("nan")) == {"$float": "nan"}
    assert encode([math.inf, -math.inf]) == [{"$float": "inf"}, {"$float": "-inf"}]
    assert close({"$float": "inf"}, {"$float": "inf"}, 1e-9, 1e-12)
    assert not close(1.0, {"$float": "nan"}, 1e-9, 1e-12)
    assert not close({"$float": "inf"}, 1e308, 1e-9, 1e-12)


def test_numpy_and_torch_scalars_count_as_numbers():
    """Is np.float64(0.5) or a 0-d tensor accepted where a float is expected?"""
    assert close(0.5, encode(np.float64(0.5)), 1e-9, 1e-12)
    assert close(0.5, encode(torch.tensor(0.5, dtype=torch.float64)), 1e-9, 1e-12)


def test_shapes_must_match():
    """Is a (2, 1) array rejected where a (2,) array is expected, and a list of one where a number is?"""
    e = encode(np.array([1.0, 2.0]))
    assert close(e, encode([1.0, 2.0]), 1e-9, 1e-12)
    assert not close(e, encode(np.array([[1.0], [2.0]])), 1e-9, 1e-12)
    assert not close(1.0, encode([1.0]), 1e-9, 1e-12)


def test_tensors_round_trip_with_dtype():
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    back = decode(encode(t))
    assert back.dtype == torch.float32 and torch.equal(back, t)


def test_inputs_are_decoded_afresh_for_every_call():
    """Can a function that mutates its input change what the next call (or the reference) sees?"""
    args = encode([[1.0, 2.0]])

    def mutate(xs):
        xs.append(99.0)
        return len(xs)

    assert outcome_of(mutate, args, {"$dict": {}}, {}) == outcome_of(
        mutate, args, {"$dict": {}}, {}
    )


def test_obj_and_fn_inputs():
    """Are notebook types (Obj) built in the caller's namespace and input functions (Fn) rebuilt from source?"""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Turn:
        response: str

    t = decode(encode(Obj.of("Turn", response="x")), {"Turn": Turn})
    assert t == Turn("x")
    assert encode(Turn("x")) == {"$obj": "Turn", "fields": {"response": "x"}}
    f = decode(encode(Fn("k1", "lambda a, b: a - b")))
    assert f(3, 1) == 2 and f.__name__ == "k1"


def test_raising_the_right_error_is_the_outcome():
    """Does a case that expects ValueError accept ValueError subclasses and nothing else?"""

    class MyError(ValueError):
        pass

    def bad(x):
        raise MyError("no")

    got = outcome_of(bad, [1], {"$dict": {}}, {})
    assert same_outcome({"raised": "ValueError"}, got, 0, 0)
    got = outcome_of(lambda x: 1 / 0, [1], {"$dict": {}}, {})
    assert not same_outcome({"raised": "ValueError"}, got, 0, 0)


# -- outcomes every writer can take ----------------------------------------------------------------


def test_a_lone_surrogate_in_a_returned_string_becomes_a_replacement_character():
    """A learner's str with '\\ud800' used to stop the class run when a writer encoded it as
    UTF-8: is the outcome's text U+FFFD instead, in values, dict keys and object names?"""
    from autograder.cases.codec import clean_outcome

    got = outcome_of(lambda: ["a\ud800b", {"k\udfff": "\ud83d"}], [], {"$dict": {}}, {})
    assert got == {"value": ["a\ufffdb", {"$dict": {"k\ufffd": "\ufffd"}}]}
    sent = {"value": {"$obj": "T\ud800", "fields": {"x\ud800": "\ud800"}}}
    assert clean_outcome(sent) == {"value": {"$obj": "T\ufffd", "fields": {"x\ufffd": "\ufffd"}}}
    for o in (got, clean_outcome(sent)):
        str(o).encode("utf-8")


def test_a_lone_surrogate_in_an_exception_becomes_a_replacement_character():
    """The message of a learner's exception: UTF-8-safe text?"""

    def raises():
        raise RuntimeError("no \ud800 way")

    got = outcome_of(raises, [], {"$dict": {}}, {})
    assert got == {"raised": "RuntimeError", "message": "no \ufffd way"}


def test_an_integer_no_float_can_hold_is_an_unsupported_return_not_a_crash():
    """10**400 (and a list holding it) cannot be compared with a tolerance, and its text may
    pass Python's 4,300-digit limit: an UnsupportedReturn outcome, in either engine?"""
    from autograder.cases.codec import clean_outcome

    for value in (10**400, [0.5, -(10**400)]):
        got = outcome_of(lambda v=value: v, [], {"$dict": {}}, {})
        assert got["raised"] == "UnsupportedReturn" and "too large" in got["message"]
    assert clean_outcome({"value": 10**300}) == {"value": 10**300}  # a float can hold it
    assert clean_outcome({"value": True}) == {"value": True}


def test_clean_outcomes_are_left_as_they_are():
    """Ordinary outcomes pass unchanged (the same verdicts as before the cleaning)."""
    from autograder.cases.codec import clean_outcome

    for o in (
        {"value": 0.25},
        {"value": {"$float": "nan"}},
        {"value": {"$array": [1.0, 2.0], "shape": [2], "dtype": "float64"}},
        {"raised": "ValueError", "message": "policy must sum to 1 (é, 😀)"},
    ):
        assert clean_outcome(o) == o


def test_a_value_of_more_items_than_any_function_returns_is_not_compared():
    """[0.5] * 100000 returned on every case used to cost the parent minutes of scoring and
    rendering per submission (found by the fuzzer): is it an UnsupportedReturn at once, in
    lists, nested lists and arrays alike, while a value the size of an input still passes?"""
    from autograder.cases.codec import MAX_OUTCOME_ITEMS, clean_outcome

    big = MAX_OUTCOME_ITEMS + 1
    for value in (
        [0.5] * big,
        [[0.5] * 100] * (big // 100 + 1),
        {"$array": [0.5] * big, "shape": [big], "dtype": "float64"},
    ):
        got = clean_outcome({"value": value})
        assert got["raised"] == "UnsupportedReturn" and "not compared" in got["message"]
    inputs_size = {"$array": [0.5] * 5201, "shape": [5201], "dtype": "float64"}
    assert clean_outcome({"value": inputs_size}) == {"value": inputs_size}
    got = outcome_of(lambda: [0.5] * big, [], {"$dict": {}}, {})
    assert got["raised"] == "UnsupportedReturn"
