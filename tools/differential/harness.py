"""The differential test of `check` against the real vLLM: the two verdicts per config, and their comparison.

vLLM's verdict comes from tools/differential/driver.py, run once with a vLLM environment's python for all the
configs (each import of vLLM costs seconds). Ours is `check_files` in this process: "refused" when the config
is bad input (exit 2) or has an error finding (exit 1). The check gets the same model (the config's model
folder: the tiny Llama's or a variant's config.json) and an L4 as the GPU: the CPU build's default batch sizes (2,048 tokens per GPU) match those of
GPUs under 70 GiB, where an H100's would not.

Disagreements vLLM's CPU build causes and a GPU build would not (its own platform checks) are listed, with
the reason, in rules/differential/known-disagreements.yaml; `classify` names the entry a disagreement fits.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Optional

from .configs import REMOVED, check_file, model_dir, vllm_argv

ROOT = Path(__file__).resolve().parents[2]
TINY_LLAMA = ROOT / "fixtures" / "live" / "tiny-llama"
DRIVER = Path(__file__).resolve().parent / "driver.py"
KNOWN = ROOT / "rules" / "differential" / "known-disagreements.yaml"
CHECK_GPU = "L4"


def vllm_verdicts(venv: Path, configs: list[dict[str, Any]], timeout: float = 1800) -> dict[str, dict[str, Any]]:
    """vLLM's verdict on each config, by id: one driver process for all of them."""
    lines = "".join(json.dumps(vllm_argv(c)) + "\n" for c in configs)
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run([str(venv / "bin" / "python"), str(DRIVER), str(TINY_LLAMA)], input=lines,
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=str(ROOT))
    out: dict[str, dict[str, Any]] = {}
    for line in proc.stdout.splitlines():
        item = json.loads(line)
        if "ready" in item:
            continue
        out[item.pop("id")] = item
    if len(out) != len(configs):
        raise RuntimeError(f"the vLLM driver answered {len(out)} of {len(configs)} configs (exit {proc.returncode}):\n"
                           + proc.stderr[-3000:])
    return out


def check_verdict(config: dict[str, Any], version: str) -> dict[str, Any]:
    """Our verdict: refused (with the error rules, or the bad-input sentence) or ok."""
    from reader.rules_engine.run import CheckOptions, check_files

    name, text = check_file(config)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(text)
        report = check_files([str(path)], CheckOptions(vllm_version=version, gpu=CHECK_GPU,
                                                       model=str(model_dir(config) / "config.json")))
    errors = sorted({f.rule_id for f in report.findings if f.severity == "error"})
    bad = [c.error for c in report.configs if c.status == "bad-input"]
    if bad:
        return {"verdict": "refused", "how": "bad-input", "message": bad[0].replace(str(tmp), "")}
    return {"verdict": "refused" if errors else "ok", "how": "rules", "rules": errors}


def known_disagreements() -> list[dict[str, Any]]:
    import yaml

    return yaml.safe_load(KNOWN.read_text())["disagreements"]


def classify(config: dict[str, Any], vllm: dict[str, Any], ours: dict[str, Any], version: str,
             known: list[dict[str, Any]]) -> Optional[str]:
    """The id of the listed disagreement this one is an instance of, or None (an unexplained disagreement)."""
    from reader.versions import VersionRange, parse_version

    for entry in known:
        if not VersionRange.parse(entry["versions"]).contains(parse_version(version)):
            continue
        if entry["vllm"] != vllm["verdict"]:
            continue
        if all(_matches(config["settings"].get(option), want) for option, want in entry["when"].items()):
            return entry["id"]
    return None


def _matches(value: Any, want: Any) -> bool:
    if want == "set":
        return value is not None
    if want == "unset":
        return value is None
    if isinstance(want, list):
        return value in want
    return value == want


def compare(configs: list[dict[str, Any]], verdicts: dict[str, dict[str, Any]], version: str) -> dict[str, Any]:
    """Agreement over the configs: counts, and each disagreement with the listed reason it fits, if any."""
    known = known_disagreements()
    rows, agree = [], 0
    exercised: dict[str, int] = {}  # rule -> configs both refused where it fired: the refusals the run proved
    for config in configs:
        vllm = verdicts[config["id"]]
        ours = check_verdict(config, version)
        if vllm["verdict"] == ours["verdict"]:
            agree += 1
            for rule_id in ours.get("rules", []) if ours["verdict"] == "refused" else []:
                exercised[rule_id] = exercised.get(rule_id, 0) + 1
            if ours.get("how") == "bad-input" and vllm["verdict"] == "refused":
                exercised["bad-input"] = exercised.get("bad-input", 0) + 1
            continue
        rows.append({"config": config, "vllm": vllm, "check": ours,
                     "known": classify(config, vllm, ours, version, known)})
    explained = sum(1 for r in rows if r["known"])
    memory = [c for c in configs if "cpu_env" in c]  # the memory-bound configs (configs.py, _memory_config)
    memory_refused = sum(1 for c in memory if verdicts[c["id"]]["verdict"] == "refused")
    memory_disagree = sum(1 for r in rows if "cpu_env" in r["config"])
    return {"version": version, "configs": len(configs), "agree": agree, "disagree": len(rows),
            "explained": explained, "unexplained": len(rows) - explained,
            "agreement": agree / len(configs) if configs else 1.0,
            "agreement_outside_known": (agree + explained) / len(configs) if configs else 1.0,
            "memory": {"configs": len(memory), "refused_by_vllm": memory_refused,
                       "agree": len(memory) - memory_disagree},
            "exercised": dict(sorted(exercised.items())), "rows": rows}


def describe(row: dict[str, Any]) -> str:
    c = row["config"]
    vllm = row["vllm"]
    said = f"{vllm.get('error', '')}: {vllm.get('message', '')}" if vllm["verdict"] == "refused" else "starts"
    ours = row["check"]
    mine = (ours.get("message") or ",".join(ours.get("rules", []))) if ours["verdict"] == "refused" else "passes"
    return (f"{c['id']} [{c['form']}] {json.dumps(c['settings'])}\n    vLLM {vllm['verdict']} ({said[:300]})\n"
            f"    check {ours['verdict']} ({mine[:300]})" + (f"\n    listed: {row['known']}" if row["known"] else ""))


def venv_for(version: str) -> Optional[Path]:
    path = os.environ.get("VLLM_READER_VLLM_" + version.replace(".", "_"))
    if path and (Path(path) / ".ready").is_file():
        return Path(path)
    return None


def options_for(version: str) -> set[str]:
    """The options to draw from at a release: its own, plus the removed ones (vLLM must refuse those)."""
    from reader.config.flagtable import flag_table
    from reader.versions import parse_version

    from .configs import VALUES

    table = flag_table(parse_version(version))
    return {o for o in VALUES if o in table.options or o in REMOVED}

