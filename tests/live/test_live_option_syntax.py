"""Option syntaxes read as the real vLLM parser reads them: repeated flags, `--opt=value`, JSON values, dotted
sub-keys (merged per spelling, appended last, replacing a whole JSON value), `key+` list appends, and the removed
KEY=VALUE form. Each argument list goes through vLLM's own FlexibleArgumentParser in the release's environment
(nothing is served) and through ours; the values must agree, and what vLLM refuses we refuse."""
from __future__ import annotations

import json
import shlex
import subprocess
import textwrap

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line
from reader.errors import ReaderError

# (arguments after the model, the dest to compare)
CASES = [
    (["--limit-mm-per-prompt", '{"image": 2}', "--limit-mm-per-prompt.video", "1"], "limit_mm_per_prompt"),
    (["--limit-mm-per-prompt.image=5", "--limit_mm_per_prompt.video=1"], "limit_mm_per_prompt"),
    (["--compilation-config", '{"cudagraph_mode": "FULL"}', "--compilation-config.mode", "3",
      "-cc.pass_config.fuse_allreduce_rms=true"], "compilation_config"),
    (["--compilation-config.mode", "3", "--compilation-config", '{"cudagraph_capture_sizes": [8]}'],
     "compilation_config"),
    (["--compilation-config.cudagraph_capture_sizes+", "1,2", "--compilation-config.cudagraph_capture_sizes+", "4"],
     "compilation_config"),
    (["--speculative-config.method", "ngram", "--speculative-config.num_speculative_tokens", "3"],
     "speculative_config"),
    (["--max-num-seqs=8", "--max-num-seqs", "16"], "max_num_seqs"),
    (["--max_model_len", "32k"], "max_model_len"),
    (["--middleware", "a.b", "--middleware", "c.d"], "middleware"),
    (["--api-key", "k1", "k2"], "api_key"),
    (["--served-model-name", "one", "two"], "served_model_name"),
    (["-tp", "2", "-pp=2"], "pipeline_parallel_size"),
    (["--tool-call-parser", "hermes", "--enable-auto-tool-choice"], "tool_call_parser"),
    (["--limit-mm-per-prompt", "image=5,video=1"], "limit_mm_per_prompt"),  # removed in 0.10.0: both refuse
    (["--enable-chunked-prefill=false"], "enable_chunked_prefill"),  # a value after a flag (KubeAI): both refuse
    (["--compilation-config", "3"], "compilation_config"),  # a bare level, refused from 0.9.2
]

_VLLM_SIDE = textwrap.dedent("""
    import dataclasses, enum, json, sys
    sys.argv = ["vllm", "serve"]
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    try:
        from vllm.entrypoints.launchers.cli_args import make_arg_parser
    except ImportError:
        from vllm.entrypoints.openai.cli_args import make_arg_parser

    def plain(v):
        if isinstance(v, enum.Enum):
            return v.value
        if dataclasses.is_dataclass(v):
            return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v if isinstance(v, (str, int, float, bool)) or v is None else str(v)

    parser = make_arg_parser(FlexibleArgumentParser())
    out = []
    for args, dest in json.load(sys.stdin):
        try:
            out.append({"value": plain(getattr(parser.parse_args(["m"] + args), dest))})
        except SystemExit:
            out.append({"error": True})
    print("RESULTS " + json.dumps(out))
""")


def vllm_parses(venv, cases):
    run = subprocess.run([str(venv / "bin" / "python"), "-c", _VLLM_SIDE], input=json.dumps(cases),
                         capture_output=True, text=True, timeout=600)
    line = next((ln for ln in run.stdout.splitlines() if ln.startswith("RESULTS ")), None)
    assert line is not None, run.stderr[-3000:]
    return json.loads(line[len("RESULTS "):])


def ours(args, dest, version):
    try:
        d = load_command_line("vllm serve m " + shlex.join(args), LoadOptions(vllm_version=version))
    except ReaderError:
        return {"error": True}
    flag = d.flags.get(dest)
    if flag is not None and flag.refused_syntax is not None:
        return {"error": True}  # a syntax the release refuses: `check` reports that vLLM would not start
    return {"value": flag.value if flag is not None else None}


def agrees(mine, theirs):
    """Our value equals vLLM's; for a config object, every key we hold equals vLLM's and no key vLLM set is
    missing from ours (vLLM fills the rest with defaults, which a loader does not hold)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        return all(k in theirs and agrees(v, theirs[k]) for k, v in mine.items())
    if isinstance(mine, str) and not isinstance(theirs, str):
        return mine == str(theirs)
    return mine == theirs


@pytest.mark.parametrize("fixture, version", [("vllm_032", "0.32.0"), ("vllm_018", "0.18.0")])
def test_option_syntaxes_agree_with_the_real_parser(request, fixture, version):
    venv = request.getfixturevalue(fixture)
    theirs = vllm_parses(venv, CASES)
    for (args, dest), real in zip(CASES, theirs):
        mine = ours(args, dest, version)
        assert ("error" in mine) == ("error" in real), (args, mine, real)
        if "value" in real:
            assert agrees(mine["value"], real["value"]), (args, mine["value"], real["value"])
    lost = dict(zip(map(lambda c: json.dumps(c[0]), CASES), theirs))
    replaced = lost[json.dumps(CASES[2][0])]["value"]
    assert replaced["cudagraph_mode"] is None and replaced["mode"] is None  # the whole JSON and -> replaced
