"""Does vLLM load a GPTQ checkpoint whose config.json has no quantization_config, only AutoGPTQ's
quantize_config.json beside it? Asked of the real vLLM (its CPU build, offline `LLM(...)`, no server) for the
tiny Llama's shape (fixtures/hf_configs/gptq-quantize-config) with GPTQ-packed weights (4 bits, group 128, zeros)
written next to it: without --quantization, with --quantization gptq (in bfloat16, and in float16: a release
whose GPTQ kernel takes float16 only refuses bfloat16), and with --quantization gptq once quantize_config.json is
removed.

    eval "$(bash tools/vllm_env.sh all)"
    PYTHONPATH=.:tools python -m differential.quant_file 0.32.0 [--record]

prints vLLM's verdicts; --record writes them to fixtures/differential/quant-file-vllm-<version>.json, which
tests/rules/test_check_stops_what_stops_vllm.py replays against `check` (VR421, VR422, VR414) offline, and
tests/live/test_live_recorded_answers.py asks again.
"""
from __future__ import annotations

from pathlib import Path

from . import ask_vllm
from .ask_vllm import ROOT, ask_lines, record_main
MODEL = ROOT / "fixtures" / "hf_configs" / "gptq-quantize-config"
TOKENIZER = ROOT / "fixtures" / "live" / "tiny-llama"
# METHOD[:no-file][@DTYPE], bfloat16 unless named; the no-file case runs last, after quantize_config.json is removed
QUANTIZATIONS = ["none", "gptq", "gptq@float16", "gptq:no-file"]

# runs inside the vLLM environment: writes the checkpoint, then one line of JSON per --quantization
_ASK = """
import json, os, re, shutil, subprocess, sys, tempfile
import torch
from safetensors.torch import save_file
model, tokenizer, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
folder = tempfile.mkdtemp()
for src in (model, tokenizer):
    for name in os.listdir(src):
        if name.endswith(".json"):
            shutil.copy(os.path.join(src, name), folder)
config = json.load(open(os.path.join(model, "config.json")))
h, inter, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
kv = config["num_key_value_heads"] * h // config["num_attention_heads"]
tensors = {"model.embed_tokens.weight": torch.zeros(config["vocab_size"], h, dtype=torch.float16),
           "lm_head.weight": torch.zeros(config["vocab_size"], h, dtype=torch.float16),
           "model.norm.weight": torch.ones(h, dtype=torch.float16)}
def packed(name, rows, cols):
    tensors[name + ".qweight"] = torch.zeros(rows // 8, cols, dtype=torch.int32)
    tensors[name + ".qzeros"] = torch.zeros(rows // 128, cols // 8, dtype=torch.int32)
    tensors[name + ".scales"] = torch.ones(rows // 128, cols, dtype=torch.float16)
    tensors[name + ".g_idx"] = torch.arange(rows, dtype=torch.int32) // 128
for i in range(layers):
    p = f"model.layers.{i}."
    for proj, rows, cols in (("self_attn.q_proj", h, h), ("self_attn.k_proj", h, kv), ("self_attn.v_proj", h, kv),
                             ("self_attn.o_proj", h, h), ("mlp.gate_proj", h, inter), ("mlp.up_proj", h, inter),
                             ("mlp.down_proj", inter, h)):
        packed(p + proj, rows, cols)
    for norm in ("input_layernorm", "post_attention_layernorm"):
        tensors[p + norm + ".weight"] = torch.ones(h, dtype=torch.float16)
save_file(tensors, os.path.join(folder, "model.safetensors"))
load = ("import sys; from vllm import LLM; q = sys.argv[2]; "
        "LLM(model=sys.argv[1], quantization=None if q == 'none' else q, dtype=sys.argv[3], enforce_eager=True, "
        "max_model_len=1024, max_num_seqs=4); print('STARTED')")
for case in cases:
    method, _, dtype = case.partition("@")
    quantization, _, variant = method.partition(":")
    if variant == "no-file":
        os.remove(os.path.join(folder, "quantize_config.json"))
    run = subprocess.run([sys.executable, "-c", load, folder, quantization, dtype or "bfloat16"],
                         capture_output=True, text=True,
                         timeout=600, env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"})
    # the engine core's own traceback carries the root cause; where its log lines go differs by release
    # (an error raised in the engine core, or a ValueError pydantic wraps as "Value error, ..." in the front end);
    # the front end's "Engine core initialization failed" only points back at it
    causes = [re.split(r"Error: |Value error, ", line, maxsplit=1)[1].split(" [type=")[0]
              for line in (run.stdout + run.stderr).splitlines()
              if re.search(r"\\w+Error: |Value error, ", line) and "initialization failed" not in line]
    started = "STARTED" in run.stdout
    print(json.dumps({"quantization": case, "verdict": "ok" if started else "refused",
                      "message": "" if started else (causes[-1] if causes else run.stderr.strip()[-300:])}))
shutil.rmtree(folder)
"""


def ask(venv: Path) -> list[dict]:
    return ask_lines(venv, _ASK, [str(MODEL), str(TOKENIZER), *QUANTIZATIONS], len(QUANTIZATIONS))


def fixture_path(version: str) -> Path:
    return ask_vllm.fixture_path("quant-file", version)


def _body(version: str, venv: Path) -> dict:
    return {"vllm": version, "model": "fixtures/hf_configs/gptq-quantize-config (the tiny Llama's shape, "
            "quantize_config.json: 4 bits, group 128) with zero GPTQ-packed weights", "recorded_by":
            "tools/differential/quant_file.py", "rows": ask(venv)}


if __name__ == "__main__":
    record_main("quant-file", _body)
