"""Shell parameter expansion is read as a POSIX shell would with the variables the file (or --set) defines. A
variable the file does not define is unknown: where the shell's operator says what an unset one gives, that is
used and said; a flag's value left empty by it is an unknown value, said in a note, never bad input."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line, load_deployment
from reader.config.shell import Expander

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def expand(text: str, **variables: str) -> str:
    value, missing = Expander(variables).expand_text(text)
    return "<unknown>" if missing else value


@pytest.mark.parametrize("text, variables, value", [
    ("${R:-main}", {}, "main"), ("${R:-main}", {"R": ""}, "main"), ("${R-main}", {"R": ""}, ""),
    ("${R:+--revision $R}", {"R": "v1"}, "--revision v1"), ("${R:+--revision $R}", {"R": ""}, ""),
    ("${R+set}", {"R": ""}, "set"), ("${R:+--revision \"$R\"}", {"R": "a b"}, "--revision a b"),
    ("${R:?need R}", {"R": "x"}, "x"), ("${R:?need R}", {}, "<unknown>"),
    ("${P#*/}", {"P": "/models/org/name"}, "models/org/name"), ("${P##*/}", {"P": "/models/org/name"}, "name"),
    ("${P%/*}", {"P": "/models/org/name"}, "/models/org"), ("${P%%/*}", {"P": "models/org/name"}, "models"),
    ("${#R}", {"R": "abcd"}, "4"), ("${#R}", {}, "<unknown>"), ("${A:-${B:-x}}", {}, "x"),
    ("${R/a/b}", {"R": "a"}, "<unknown>"), ("$R", {}, "<unknown>"), ("${R}", {}, "<unknown>"),
])
def test_posix_parameter_expansion(text, variables, value):
    assert expand(text, **variables) == value


def test_assign_default_sets_the_variable_for_later_words():
    expander = Expander({})
    assert expander.expand_text("${PORT:=8001} $PORT")[0] == "8001 8001"


def flags(command: str, **options):
    d = load_command_line(command, LoadOptions(vllm_version="0.32.0", **options))
    return {dest: f.value for dest, f in d.flags.items()}, d


def test_an_alternative_value_with_quotes_and_spaces_is_one_shell_word():
    got, _ = flags(f'REVISION=main; vllm serve {MODEL} ${{REVISION:+--revision "$REVISION"}}')
    assert got["revision"] == "main"


def dropped_notes(d) -> list[str]:
    return [n.message for n in d.notes if "read as empty" in n.message]


def test_an_alternative_of_an_undefined_variable_adds_nothing_as_with_it_unset_and_says_so():
    got, d = flags(f'vllm serve {MODEL} --served-model-name q ${{REVISION:+--revision "$REVISION"}} '
                   '--max-model-len 4096')
    assert "revision" not in got and got["max_model_len"] == 4096 and got["served_model_name"] == ["q"]
    assert dropped_notes(d) == ['${REVISION:+--revision "$REVISION"} is read as empty: REVISION is not defined in '
                                "this file, and a shell with it unset adds nothing. Supply it with --set "
                                "REVISION=VALUE to read what it adds"]


@pytest.mark.parametrize("written", ["$API_KEY", '"$API_KEY"', "${API_KEY}", "${API_KEY:-}"])
def test_a_flag_whose_value_is_an_undefined_variable_has_an_unknown_value(written):
    got, d = flags(f"vllm serve {MODEL} --api-key {written} --port 8000")
    assert got["port"] == 8000
    assert [(p.name, p.flag) for p in d.placeholders] == [("API_KEY", "--api-key")]
    assert any("API_KEY" in n.message and "value of --api-key" in n.message for n in d.notes)


def test_set_supplies_what_an_alternative_adds():
    got, _ = flags(f'vllm serve {MODEL} ${{REVISION:+--revision "$REVISION"}}', set={"REVISION": "v2"})
    assert got["revision"] == "v2"


def test_a_dockerfile_shell_entrypoint_with_an_alternative_is_read(tmp_path: Path):
    path = tmp_path / "Dockerfile"
    path.write_text('FROM vllm/vllm-openai:v0.8.5\nENV MODEL_DIR=/models/Qwen2.5-7B-Instruct\n'
                    'ENTRYPOINT ["/bin/sh", "-c", "vllm serve ${MODEL_DIR} --served-model-name ${MODEL_DIR##*/} '
                    '${REVISION:+--revision \\"$REVISION\\"} --api-key $API_KEY"]\n')
    d = load_deployment(str(path), LoadOptions())
    assert d.flags["served_model_name"].value == ["Qwen2.5-7B-Instruct"]
    assert [p.name for p in d.placeholders] == ["API_KEY"] and dropped_notes(d)
    assert not any("exec form" in n.message for n in d.notes)  # `sh -c` expands: no exec-form warning


def test_many_alternatives_of_undefined_variables_are_said_in_one_note():
    _, d = flags(f"vllm serve {MODEL} " + " ".join(f"${{V{i}:+--x}}" for i in range(5)))
    assert dropped_notes(d) == ["${V0:+--x}, ${V1:+--x}, ${V2:+--x}, and 2 more are read as empty: their variables "
                                "are not defined in this file, and a shell with them unset adds nothing. Supply "
                                "them with --set V0=VALUE to read what they add"]


def test_an_alternative_value_of_an_undefined_variable_is_an_unknown_value():
    got, d = flags(f"vllm serve {MODEL} --revision ${{REV:+$REV}} --max-model-len 4096")
    assert got["max_model_len"] == 4096 and [(p.name, p.flag) for p in d.placeholders] == [("REV", "--revision")]
