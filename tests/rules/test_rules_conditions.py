"""The condition language: compiled once, evaluated three-valued, no eval/exec."""
from __future__ import annotations

import pytest

from reader.rules_engine.conditions import ConditionError, Evaluation, compile_condition, evaluate

V = (0, 18, 0)


def ev(cond, facts, version=V):
    e = Evaluation()
    return evaluate(compile_condition(cond), facts, version, e), e


@pytest.mark.parametrize("cond, facts, expected", [
    ({"fact": "a", "eq": 1}, {"a": 1}, True),
    ({"fact": "a", "ne": 1}, {"a": 2}, True),
    ({"fact": "a", "lt": {"fact": "b"}}, {"a": 1, "b": 2}, True),
    ({"fact": "a", "ge": 2}, {"a": 2}, True),
    ({"fact": "a", "in": ["x", "y"]}, {"a": "y"}, True),
    ({"fact": "a", "not_in": ["x", "y"]}, {"a": "z"}, True),
    ({"fact": "a", "is_set": True}, {"a": 0}, True),
    ({"fact": "a", "is_unset": True}, {"a": None}, True),
    ({"fact": "a", "is_unset": True}, {}, True),
    ({"fact": "a", "divides": 32}, {"a": 4}, True),
    ({"fact": "a", "not_divisible_by": {"fact": "b"}}, {"a": 32, "b": 3}, True),
    ({"fact": "a", "not_divisible_by": {"fact": "b"}}, {"a": 32, "b": 4}, False),
    ({"fact": "a", "contains": "volta"}, {"a": "NVIDIA Volta (sm_70)"}, True),
    ({"fact": "a", "matches": "[a-z0-9_]+_mtp"}, {"a": "qwen3_next_mtp"}, True),
    ({"fact": "a", "matches": "[a-z0-9_]+_mtp"}, {"a": "mtp"}, False),
    ({"fact": "a", "gt": {"mul": [{"fact": "b"}, {"add": [{"fact": "c"}, 1]}]}}, {"a": 9, "b": 2, "c": 3}, True),
    ({"all": [{"fact": "a", "eq": 1}, {"not": {"fact": "b", "eq": 1}}]}, {"a": 1, "b": 2}, True),
    ({"any": [{"fact": "a", "eq": 2}, {"version": "0.18.0.."}]}, {"a": 1}, True),
    ({"version": ["0.6.3", "0.10.0..0.14.1"]}, {}, False),
    ({"fact": "a", "eq": True}, {"a": 1}, False),  # booleans are not numbers
])
def test_operators(cond, facts, expected):
    assert ev(cond, facts)[0] is expected


def test_missing_fact_is_unknown_and_recorded():
    result, e = ev({"fact": "model.num_attention_heads", "not_divisible_by": {"fact": "tensor_parallel_size"}},
                   {"tensor_parallel_size": 3})
    assert result is None
    assert e.missing == {"model.num_attention_heads"}


def test_three_valued_logic():
    unknown = {"fact": "model.x", "eq": 1}
    assert ev({"all": [unknown, {"fact": "a", "eq": 2}]}, {"a": 1})[0] is False  # false wins in all
    assert ev({"all": [unknown, {"fact": "a", "eq": 1}]}, {"a": 1})[0] is None
    assert ev({"any": [unknown, {"fact": "a", "eq": 1}]}, {"a": 1})[0] is True  # true wins in any
    assert ev({"any": [unknown, {"fact": "a", "eq": 2}]}, {"a": 1})[0] is None
    assert ev({"not": unknown}, {})[0] is None  # not(unknown) stays unknown, never true


def test_presence_facts_are_never_unknown():
    assert ev({"fact": "given.max_num_seqs", "gt": 5}, {})[0] is False
    assert ev({"fact": "given.max_num_seqs", "eq": 5}, {})[0] is False
    assert ev({"fact": "env.VLLM_USE_V1", "eq": "0"}, {})[0] is False
    assert ev({"fact": "spec.method", "in": ["eagle"]}, {"spec.enabled": False})[0] is False
    result, e = ev({"fact": "given.x", "gt": {"fact": "model.y"}}, {})
    assert result is False and not e.missing


def test_none_values_of_resolved_settings_are_unknown_for_ordering():
    assert ev({"fact": "max_model_len", "gt": 10}, {"max_model_len": None})[0] is None
    assert ev({"fact": "quantization", "eq": "awq"}, {"quantization": None})[0] is False


def test_matches_is_bounded():
    long = "a" * 5000 + "_mtp"
    assert ev({"fact": "a", "matches": "a+_mtp"}, {"a": long})[0] is False  # only the first 1000 chars are tried
    with pytest.raises(ConditionError, match="longer than 200"):
        compile_condition({"fact": "a", "matches": "a" * 201})


@pytest.mark.parametrize("cond, words", [
    ({"fact": "a", "gt": 1, "lt": 2}, "exactly one operator"),
    ({"fact": "a", "bigger": 1}, "unknown operator 'bigger'"),
    ({"fact": "a"}, "exactly one operator"),
    ({"all": []}, "non-empty list"),
    ({"nand": [{"fact": "a", "eq": 1}]}, "unknown condition"),
    ({"fact": "__import__('os')", "eq": 1}, "must be a fact key"),
    ({"fact": "a", "eq": {"call": "x"}}, "a value may be a literal"),
    ({"fact": "a", "in": 3}, "takes a list"),
    ({"fact": "a", "is_set": False}, "takes the value true"),
    ({"version": "new"}, "bad version range"),
    ("a > 1", "must be a mapping"),
])
def test_bad_conditions_are_refused(cond, words):
    with pytest.raises(ConditionError, match=words.replace("(", r"\(").replace(")", r"\)")):
        compile_condition(cond)


def test_no_eval_or_exec_in_the_engine():
    from pathlib import Path

    import reader.rules_engine as pkg

    for path in Path(pkg.__file__).parent.glob("*.py"):
        text = path.read_text()
        assert "eval(" not in text.replace("evaluate(", "").replace("_evaluate(", ""), path
        assert "exec(" not in text, path


@pytest.mark.parametrize("op, value", [("contains", "x"), ("gt", 1), ("matches", "x+"), ("divides", 4)])
def test_a_present_fact_without_a_value_is_unknown_and_listed_missing_for_every_operator(op, value):
    result, e = ev({"fact": "model.arch", op: value}, {"model.arch": None})
    assert result is None and e.missing == {"model.arch"}
