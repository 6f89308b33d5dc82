"""fedlib.core.validate, function by function: what each check accepts (and returns), where its bounds are, and
which error it raises, its message naming the parameter. (validate.py is hashed by the result store: tested
here, never edited for a test.)"""
from __future__ import annotations

import math

import numpy as np
import pytest

from fedlib.core.validate import (ParameterTypeError, check_array, check_bool, check_callable, check_choice,
                                  check_float, check_instance, check_int, check_list, check_mask, check_per_client,
                                  check_str)

INF, NAN = float("inf"), float("nan")


def test_parameter_type_error_is_a_type_error_and_a_value_error():
    assert issubclass(ParameterTypeError, TypeError) and issubclass(ParameterTypeError, ValueError)


def test_check_int_bounds_are_inclusive_and_only_integers_pass():
    assert check_int("k", 1, 1) == 1 and check_int("k", 5, 1, 5) == 5 and check_int("k", 0, 0) == 0
    assert check_int("k", -7) == -7
    got = check_int("k", np.int64(3), 1)
    assert got == 3 and type(got) is int
    with pytest.raises(ValueError, match=r"k must be a positive integer \(an int >= 1\), got 0"):
        check_int("k", 0, 1)
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 5\], got 6"):
        check_int("k", 6, 1, 5)
    with pytest.raises(ValueError, match=r"k must be an integer <= 3, got 4"):
        check_int("k", 4, None, 3)
    for bad in (True, np.bool_(True), 2.0, 2.5, "2", None, NAN):
        with pytest.raises(ParameterTypeError, match=r"^k must be"):
            check_int("k", bad, 0)
    with pytest.raises(ValueError, match="k must be a non-negative integer .* or None, got -1"):
        check_int("k", -1, 0, extra=" or None")


def test_check_float_open_and_closed_bounds_nan_and_inf():
    assert check_float("x", 0.0, low=0.0) == 0.0 and check_float("x", 1.0, high=1.0) == 1.0
    got = check_float("x", 2)
    assert got == 2.0 and type(got) is float
    assert check_float("x", np.float32(0.5), 0, 1) == 0.5
    with pytest.raises(ValueError, match=r"x must be > 0.0 \(a finite number\), got 0.0"):
        check_float("x", 0.0, low=0.0, low_open=True)
    with pytest.raises(ValueError, match=r"x must be < 1"):
        check_float("x", 1.0, high=1.0, high_open=True)
    with pytest.raises(ValueError, match=r"x must be >= 0"):
        check_float("x", -1e-9, low=0.0)
    with pytest.raises(ValueError, match=r"x must be <= 1"):
        check_float("x", 1.0 + 1e-9, high=1.0)
    assert check_float("x", 0.5, low=0.0, low_open=True, high=1.0, high_open=True) == 0.5
    for bad in (NAN, INF, -INF):
        with pytest.raises(ValueError, match="x must be"):
            check_float("x", bad)
    assert check_float("x", INF, allow_inf=True) == INF
    with pytest.raises(ValueError, match="x must be"):
        check_float("x", NAN, allow_inf=True)
    for bad in (True, "1.0", None, [1.0]):
        with pytest.raises(ParameterTypeError, match="x must be"):
            check_float("x", bad)


def test_check_bool_takes_only_bools():
    assert check_bool("flag", True) is True and check_bool("flag", np.bool_(False)) is False
    for bad in (0, 1, "True", None, 1.0):
        with pytest.raises(ParameterTypeError, match=r"flag must be True or False, got"):
            check_bool("flag", bad)


def test_check_str_refuses_blank_strings_unless_allowed():
    assert check_str("name", "iid") == "iid" and check_str("name", "", nonempty=False) == ""
    assert check_str("name", "  ", nonempty=False) == "  "
    for blank in ("", "  ", "\t\n"):
        with pytest.raises(ValueError, match="name must be a non-empty string"):
            check_str("name", blank)
    for bad in (None, 3, b"iid", ["iid"]):
        with pytest.raises(ParameterTypeError, match="name must be a non-empty string"):
            check_str("name", bad)


def test_check_choice_compares_types_too():
    assert check_choice("mode", "a", ("a", "b")) == "a"
    assert check_choice("flag", True, (True, False, None)) is True
    assert check_choice("flag", None, (True, False, None)) is None
    with pytest.raises(ValueError, match=r"mode must be one of \('a', 'b'\), got 'c'"):
        check_choice("mode", "c", ("a", "b"))
    with pytest.raises(ParameterTypeError, match="mode must be one of"):
        check_choice("mode", 1, ("a", "b"))                            # a number where names are expected
    # mixed choices: no type check first, but 1 == True and 0 == False are still refused
    for bad in (1, 0, 1.0):
        with pytest.raises(ValueError, match="flag must be one of"):
            check_choice("flag", bad, (True, False, None))
    with pytest.raises(ValueError, match="n must be one of"):
        check_choice("n", 2.0, (1, 2, "all"))


def test_check_list_items_named_by_index_lengths_and_repeats():
    assert check_list("xs", (1, 2)) == [1, 2] and check_list("xs", range(3)) == [0, 1, 2]
    assert check_list("xs", [], min_len=0) == []
    assert check_list("xs", [1, 2], lambda n, v: check_int(n, v, 1)) == [1, 2]
    with pytest.raises(ValueError, match=r"xs\[1\] must be a positive integer"):
        check_list("xs", [1, 0], lambda n, v: check_int(n, v, 1))
    with pytest.raises(ParameterTypeError, match=r"xs\[2\] must be"):
        check_list("xs", [1, 2, "3"], lambda n, v: check_int(n, v, 1))
    with pytest.raises(ValueError, match=r"xs must be a list of at least 2 item\(s\), got \[1\]"):
        check_list("xs", [1], min_len=2)
    with pytest.raises(ParameterTypeError, match="the string 'iid'"):
        check_list("xs", "iid")
    for bad in ({1, 2}, {"a": 1}, np.array([1, 2]), (x for x in [1]), None):
        with pytest.raises(ParameterTypeError, match="xs must be a list"):
            check_list("xs", bad)
    with pytest.raises(ValueError, match="xs must not repeat an item, got 2 twice"):
        check_list("xs", [1, 2, 3, 2], distinct=True)
    assert check_list("xs", [1, 2, 3], distinct=True) == [1, 2, 3]
    # repeats are judged on the checked items: np.int64(2) and 2 are one item
    with pytest.raises(ValueError, match="repeat"):
        check_list("xs", [2, np.int64(2)], lambda n, v: check_int(n, v), distinct=True)


def test_check_array_bounds_nan_inf_integers_and_shape():
    a = check_array("a", [1, 2.5])
    assert a.dtype == float and a.tolist() == [1.0, 2.5]
    i = check_array("a", [1, 2], integer=True)
    assert i.dtype.kind == "i" and i.tolist() == [1, 2]
    assert check_array("a", [0.0, 1.0], low=0.0, high=1.0).tolist() == [0.0, 1.0]   # closed bounds
    with pytest.raises(ValueError, match=r"a must be an array of finite numbers > 0"):
        check_array("a", [0.0, 1.0], low=0.0, low_open=True)
    with pytest.raises(ValueError, match=r"in \[0.0, 1.0\]"):
        check_array("a", [0.5, 1.5], low=0.0, high=1.0)
    with pytest.raises(ValueError, match="a must be"):
        check_array("a", [-0.1], low=0.0)
    for bad in ([1.0, NAN], [1.0, INF], [-INF]):
        with pytest.raises(ValueError, match="no NaN or inf"):
            check_array("a", bad)
    assert check_array("a", [1.0, INF], allow_inf=True).tolist() == [1.0, INF]
    with pytest.raises(ValueError, match="a must be"):
        check_array("a", [1.0, -INF], allow_inf=True)                   # +inf only
    with pytest.raises(ValueError, match="a must be"):
        check_array("a", [NAN], allow_inf=True)
    with pytest.raises(ParameterTypeError, match="a must be an array of integers"):
        check_array("a", [1.0, 2.0], integer=True)
    for bad in ([True, False], ["1"], [None], [[1, 2], [3]], {"a": 1}):
        with pytest.raises(ParameterTypeError, match="a must be"):
            check_array("a", bad)
    with pytest.raises(ValueError, match=r"a must be a 1-D array, got shape \(2, 1\)"):
        check_array("a", [[1.0], [2.0]], ndim=1)
    assert check_array("a", [[1.0], [2.0]], ndim=2).shape == (2, 1)
    with pytest.raises(ValueError, match="a must not be empty"):
        check_array("a", [])
    empty = check_array("a", [], nonempty=False, integer=True)
    assert empty.size == 0 and empty.dtype == np.int64


def test_check_instance_and_check_callable_with_and_without_none():
    assert check_instance("m", 3, int) == 3 and check_instance("m", None, int, allow_none=True) is None
    assert check_instance("m", 3.0, (int, float)) == 3.0
    with pytest.raises(ParameterTypeError, match=r"m must be int, got None"):
        check_instance("m", None, int)
    with pytest.raises(ParameterTypeError, match=r"m must be int or float or None, got 'x' \(str\)"):
        check_instance("m", "x", (int, float), allow_none=True)
    with pytest.raises(ParameterTypeError, match=r"m must be a model, got 'x'"):
        check_instance("m", "x", int, what="a model")
    assert check_callable("f", len) is len and check_callable("f", None) is None
    with pytest.raises(ParameterTypeError, match=r"f must be a callable, got None"):
        check_callable("f", None, allow_none=False)
    with pytest.raises(ParameterTypeError, match=r"f must be a callable or None, got 3"):
        check_callable("f", 3)


def test_check_per_client_length_shape_and_scalars():
    assert check_per_client("mbps", [1, 2, 3], 3).tolist() == [1.0, 2.0, 3.0]
    assert check_per_client("mbps", 5, 3, allow_scalar=True).tolist() == [5.0, 5.0, 5.0]
    with pytest.raises(ValueError, match=r"mbps must hold one entry per client: K = 3 entries, got shape \(3, 1\)"):
        check_per_client("mbps", [[1], [2], [3]], 3)
    with pytest.raises(ValueError, match=r"N = 2 entries \(or one number for every one\), got shape \(3,\)"):
        check_per_client("mbps", [1, 2, 3], 2, what="N", allow_scalar=True)
    with pytest.raises(ValueError, match="mbps must be"):
        check_per_client("mbps", [1, -2, 3], 3, low=0.0)              # bounds go to check_array
    assert check_per_client("b", [1, 2], 2, integer=True, low=1).dtype.kind == "i"


def test_check_mask_bools_of_the_right_length_only():
    assert check_mask("mask", np.array([True, False]), 2).tolist() == [True, False]
    with pytest.raises(ParameterTypeError, match=r"mask must be K = 2 bools"):
        check_mask("mask", [1, 0], 2)
    with pytest.raises(ValueError, match=r"mask must be N = 2 bools \(one per client\), got shape \(2, 1\)"):
        check_mask("mask", [[True], [False]], 2, what="N")
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        check_mask("mask", [True] * 3, 2)


def test_messages_show_the_value_and_its_type_shortened():
    with pytest.raises(ParameterTypeError) as e:
        check_int("k", "x" * 200)
    msg = str(e.value)
    assert msg.endswith("... (str)") and len(msg) < 200
    with pytest.raises(ParameterTypeError, match=r"got 2\.0 \(float\)"):
        check_int("k", 2.0)
    assert not math.isnan(check_float("x", 0))
