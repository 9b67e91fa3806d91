"""Chunked prefill x speculative decoding, per vLLM version, as vLLM's docs and code say.

The lesson material says two things about v0.18.0: that --enable-chunked-prefill with a draft-model
speculative model fails at start-up, and that the v0.18.0 matrix marks SD x CP compatible (draft-model
speculation incompatible only up to v0.10.0). vLLM v0.18.0's docs and code agree with the second:
  - docs/features/README.md line 44 @ v0.18.0: "| [SD](speculative_decoding/README.md) | ✅ | ✅ | ❌ | ✅ | ..."
    (CP ✅, APC ✅, LoRA ❌);
  - docs/features/speculative_decoding/README.md lines 72-75 @ v0.18.0: "1. Pipeline parallelism is not
    composible with speculative decoding as of `vllm<=0.15.0`" / "2. Speculative decoding with a draft
    models is not supported in `vllm<=0.10.0`";
  - no code path raises for the pair in v0.18.0 (../shared/reference/vllm/compat-matrix.yaml
    spec_decode_details.v0_18_0_resolution).
The start-up failure matches v0.6.3 (any SD + CP) or v0.10.0..v0.14.1 (draft_model refused regardless of CP).
"""
from __future__ import annotations

from _rules_helpers import check_text, fired
from reader.rules_engine.loader import load_rules
from reader.rules_engine.matrix import matrix_table

DRAFT_CFG = "'{\"method\": \"draft_model\", \"model\": \"meta-llama/Llama-3.2-1B\", \"num_speculative_tokens\": 3}'"
SD_CP_RULES = {"VR301", "VR302", "VR303", "VR304"}


def test_v0_18_0_allows_chunked_prefill_with_a_draft_model(tmp_path):
    report = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 4 "
                        f"--enable-chunked-prefill --speculative-config {DRAFT_CFG}", version="0.18.0",
                        gpu="H100-SXM", gpus=4)
    assert report.configs[0].vllm_version == "0.18.0"
    assert fired(report, "error") == set()
    assert fired(report) & SD_CP_RULES == set()
    # what does apply to draft models at v0.18.0: async scheduling turns itself off, the budget shrinks
    assert {"VR319", "VR320"} <= fired(report, "info")
    # and none of the SD x CP rules is active at v0.18.0
    rules = load_rules()
    assert not any(rules.get(rid).active((0, 18, 0)) for rid in SD_CP_RULES)


def test_v0_18_0_matrix_marks_spec_decode_and_chunked_prefill_compatible():
    table = matrix_table(load_rules().matrix, "0.18.0")
    entry = table["ff"][("spec_decode", "chunked_prefill")]
    assert entry["status"] == "yes"
    assert any("docs/features/README.md" in s for s in entry["source"])
    pp = table["ff"][("spec_decode", "pipeline_parallel")]
    assert pp["status"] == "yes"  # the SD README bounds the PP incompatibility to vllm<=0.15.0


def test_v0_6_3_any_speculation_with_chunked_prefill_refuses_to_start(tmp_path):
    for spec in ("--speculative-model meta-llama/Llama-3.2-1B --num-speculative-tokens 3",
                 "--speculative-model '[ngram]' --num-speculative-tokens 3 --ngram-prompt-lookup-max 4"):
        report = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-70B --enable-chunked-prefill {spec}",
                            version="0.6.3")
        assert "VR301" in fired(report, "error"), spec
        finding = next(f for f in report.findings if f.rule_id == "VR301")
        assert finding.vllm_message.startswith("Speculative decoding and chunked prefill are currently mutually")


def test_v0_6_3_without_chunked_prefill_is_fine(tmp_path):
    report = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-70B --speculative-model meta-llama/Llama-3.2-1B "
                        "--num-speculative-tokens 3", version="0.6.3")
    assert fired(report) & SD_CP_RULES == set()


def test_v0_6_6_only_hidden_state_drafts_conflict_with_chunked_prefill(tmp_path):
    eagle = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --enable-chunked-prefill --speculative-model "
                       "yuhuili/EAGLE-LLaMA3-Instruct-8B --num-speculative-tokens 3", version="0.6.6")
    assert "VR302" in fired(eagle, "error")
    draft = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-70B --enable-chunked-prefill --speculative-model "
                       "meta-llama/Llama-3.2-1B --num-speculative-tokens 3", version="0.6.6")
    assert fired(draft) & SD_CP_RULES == set()


def test_v0_7_3_to_v0_11_0_eagle_with_chunked_prefill_fails_only_on_v0(tmp_path):
    eagle = ("--enable-chunked-prefill --speculative-model yuhuili/EAGLE-LLaMA3-Instruct-8B "
             "--num-speculative-tokens 3")
    v0 = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-8B {eagle}", version="0.7.3")
    assert "VR303" in fired(v0, "error")
    assert next(f for f in v0.findings if f.rule_id == "VR303").vllm_message == \
        "Chunked prefill and EAGLE are not compatible."
    cfg = "'{\"method\": \"eagle\", \"model\": \"yuhuili/EAGLE-LLaMA3-Instruct-8B\", \"num_speculative_tokens\": 3}'"
    forced_v0 = check_text(tmp_path, "VLLM_USE_V1=0 vllm serve meta-llama/Llama-3.1-8B --enable-chunked-prefill "
                           f"--speculative-config {cfg}", version="0.10.1")
    assert forced_v0.configs[0].engine == "v0"
    assert "VR303" in fired(forced_v0, "error")
    v1 = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-8B --enable-chunked-prefill --speculative-config {cfg}",
                    version="0.10.1")
    assert v1.configs[0].engine == "v1"
    assert fired(v1) & SD_CP_RULES == set()
    draft = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-70B --enable-chunked-prefill --speculative-model "
                       "meta-llama/Llama-3.2-1B --num-speculative-tokens 3", version="0.7.3")
    assert fired(draft) & SD_CP_RULES == set()


def test_v0_10_0_to_v0_14_1_explicit_draft_model_is_refused_with_or_without_chunked_prefill(tmp_path):
    for version, wording in (("0.10.0", "Speculative decoding with draft model is not supported yet."),
                             ("0.14.1", "Draft model speculative decoding is not supported yet.")):
        for cp in ("--enable-chunked-prefill", "--no-enable-chunked-prefill"):
            report = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-70B {cp} --speculative-config {DRAFT_CFG}",
                                version=version)
            assert "VR304" in fired(report, "error"), (version, cp)
            finding = next(f for f in report.findings if f.rule_id == "VR304")
            assert finding.vllm_message.startswith(wording)


def test_v0_16_0_onwards_draft_models_are_back(tmp_path):
    report = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-70B --speculative-config {DRAFT_CFG}",
                        version="0.16.0")
    assert "VR304" not in fired(report)
