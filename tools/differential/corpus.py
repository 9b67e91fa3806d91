"""The corpus through the real vLLM: every config of fixtures/corpus/ given to vLLM's parser, the `vllm serve`
argument checks and EngineArgs.create_engine_config() (tools/differential/driver.py, the CPU build), with the
model's shipped config.json (reader/catalog/models/) as a local folder, and `check`'s verdict on the same file
at the same release beside it.

    eval "$(bash tools/vllm_env.sh all)"
    PYTHONPATH=.:tools python -m differential.corpus 0.32.0 [--record]

prints one line per config and the agreement; --record writes vLLM's verdicts to
fixtures/differential/corpus-vllm-<version>.jsonl, which tests/rules/test_rules_differential_corpus.py replays
against `check` offline. Every disagreement must be listed, with its reason, in
rules/differential/corpus-disagreements.yaml.

What vLLM is given is what `check` read: the launch `check` picks (the first in the file), its arguments after
the model (`vllm serve` positional or `--model`), its `--config` entries as a YAML file and its environment.
A config whose model has no shipped config.json, or whose arguments keep a placeholder the file never sets,
is not asked (vLLM would read the placeholder's text); it is listed as such.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "corpus"
CATALOG = ROOT / "reader" / "catalog" / "models"
DRIVER = Path(__file__).resolve().parent / "driver.py"
LISTED = ROOT / "rules" / "differential" / "corpus-disagreements.yaml"
MEMORY_RULES = {"VR417", "VR418"}  # check's memory refusals: a GPU's memory, which the CPU build never judges


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir()
                  if p.is_file() and p.name != "INDEX.yaml" and not p.name.endswith(".provenance.txt"))


def shipped_config(model: Optional[str]) -> Optional[Path]:
    """The shipped config.json of `model`: its catalog folder (reader/catalog/models/ORG/NAME), else a local
    path's or a Hugging Face cache folder's last part by name (`/models/Qwen2.5-0.5B-Instruct`,
    `models--Qwen--Qwen1.5-7B-Chat`), else the same model without a suffix that leaves config.json as it is
    (`-Instruct` of Llama 3.1, a dated `-0528`): SUBSTITUTES."""
    if not model:
        return None
    path = CATALOG / model.strip("/") / "config.json"
    if path.is_file():
        return path
    name = model.rstrip("/").split("/")[-1]
    if name.startswith("models--"):
        name = name.split("--")[-1]
    name = SUBSTITUTES.get(name, name)
    found = [p for p in CATALOG.glob("*/*/config.json") if p.parent.name.lower() == name.lower()]
    return found[0] if len(found) == 1 else None


# the catalog's folder for a model it lacks whose config.json differs only in what start-up never reads
# (generation ids, a date): Llama-3.1-8B-Instruct ships Llama-3.1-8B's architecture, DeepSeek-R1-0528 R1's
SUBSTITUTES = {"Llama-3.1-8B-Instruct": "Llama-3.1-8B", "Meta-Llama-3.1-8B-Instruct": "Llama-3.1-8B",
               "DeepSeek-R1-0528": "DeepSeek-R1", "Llama-3.2-1B-Instruct": "Llama-3.2-1B"}


def index_model(name: str) -> Optional[str]:
    """The model fixtures/corpus/INDEX.yaml names for a `--config` file that holds none (a recipe's YAML, served
    as `vllm serve MODEL --config FILE`): the first word of its `model`."""
    import yaml

    for entry in yaml.safe_load((CORPUS / "INDEX.yaml").read_text())["files"]:
        if entry["file"] == name and entry.get("model"):
            return str(entry["model"]).split()[0].rstrip(";")
    return None


def vllm_item(path: Path) -> dict[str, Any]:
    """What the driver is given for one corpus file, or {"skip": reason}."""
    import yaml

    from reader.config.find import find_invocations
    from reader.config.load import load_deployment, read_text

    try:
        dep = load_deployment(str(path))
        inv = find_invocations(str(path), read_text(str(path)), {})[0]
    except Exception as exc:  # check calls the file bad input: vLLM gets nothing to run
        return {"skip": f"no launch: {str(exc).splitlines()[0][:200]}"}
    config = shipped_config(dep.model or index_model(path.name))
    if config is None:
        return {"skip": f"no shipped config.json for the model {dep.model or index_model(path.name)!r}"}
    if any(t.unresolved for t in inv.tokens):
        return {"skip": "a placeholder the file never sets: "
                        + ", ".join(sorted({u for t in inv.tokens for u in t.unresolved}))}
    words = [t.text for t in inv.tokens]
    argv: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("--model",) and i + 1 < len(words):
            i += 2
            continue
        if w.startswith("--model="):
            i += 1
            continue
        if i == 0 and not w.startswith("-"):  # the positional model
            i += 1
            continue
        argv.append(_local_models(w))
        i += 1
    item: dict[str, Any] = {"argv": argv, "env": dict(inv.env), "model_config": str(config)}
    entries = {e.key: e.value for e in inv.entries if e.key != "model"}
    if entries:
        item["config_yaml"] = yaml.safe_dump(_local_models(entries), sort_keys=False)
    return item


def _local_models(value: Any) -> Any:
    """A draft model named in a JSON option -> its shipped config.json's folder, when there is one."""
    if isinstance(value, dict):
        return {k: (str(shipped_config(v).parent) if k == "model" and isinstance(v, str) and shipped_config(v)
                    else _local_models(v)) for k, v in value.items()}
    if isinstance(value, str) and value.startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return json.dumps(_local_models(parsed)) if isinstance(parsed, dict) else value
    return value


def vllm_verdicts(venv: Path, items: dict[str, dict[str, Any]], timeout: float = 1800) -> dict[str, dict[str, Any]]:
    """vLLM's verdict on each corpus file that can be asked, by file name: one driver process."""
    with tempfile.TemporaryDirectory() as tmp:
        lines = []
        for name, item in items.items():
            if "skip" in item:
                continue
            folder = Path(tmp) / name
            folder.mkdir()
            shutil.copy(item["model_config"], folder / "config.json")
            lines.append(json.dumps({"id": name, "model": str(folder), "argv": item["argv"], "env": item["env"],
                                     **({"config_yaml": item["config_yaml"]} if "config_yaml" in item else {})}))
        env = dict(os.environ, PYTHONHASHSEED="0")
        proc = subprocess.run([str(venv / "bin" / "python"), str(DRIVER), str(ROOT / "fixtures" / "live" / "tiny-llama")],
                              input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=timeout,
                              env=env, cwd=str(ROOT))
    out = {}
    for line in proc.stdout.splitlines():
        got = json.loads(line)
        if "ready" not in got:
            name = got.pop("id")
            got["message"] = got.get("message", "").replace(tmp, "")
            out[name] = got
    asked = sum(1 for i in items.values() if "skip" not in i)
    if len(out) != asked:
        raise RuntimeError(f"the vLLM driver answered {len(out)} of {asked} configs (exit {proc.returncode}):\n"
                           + proc.stderr[-3000:])
    return out


def check_verdict(name: str, version: str) -> dict[str, Any]:
    """`check`'s verdict on the corpus file at `version`, with the model's shipped config.json."""
    from reader.config.load import load_deployment
    from reader.rules_engine.run import CheckOptions, check_files

    path = CORPUS / name
    try:
        model = shipped_config(load_deployment(str(path)).model or index_model(name))
    except Exception:
        model = None
    report = check_files([str(path)], CheckOptions(vllm_version=version, model=str(model) if model else None))
    bad = [c.error for c in report.configs if c.status == "bad-input"]
    if bad:
        return {"verdict": "refused", "how": "bad-input", "message": bad[0]}
    errors = sorted({f.rule_id for f in report.findings if f.severity == "error"})
    return {"verdict": "refused" if errors else "ok", "how": "rules", "rules": errors}


def listed() -> dict[tuple[str, str], dict[str, Any]]:
    import yaml

    entries = yaml.safe_load(LISTED.read_text())["disagreements"]
    return {(e["file"], v): e for e in entries for v in e["versions"]}


def compare(version: str, verdicts: dict[str, dict[str, Any]], skipped: dict[str, str]) -> dict[str, Any]:
    """Config by config: both verdicts, agreement, and the listed reason of each disagreement."""
    known = listed()
    rows = []
    for name in sorted(verdicts):
        vllm, ours = verdicts[name], check_verdict(name, version)
        agree = vllm["verdict"] == ours["verdict"]
        entry = None if agree else known.get((name, version))
        rows.append({"file": name, "vllm": vllm, "check": ours, "agree": agree,
                     "reason": entry["reason"] if entry else None, "kind": entry["kind"] if entry else None})
    agree = sum(1 for r in rows if r["agree"])
    memory = sum(1 for r in rows if not r["agree"] and r["kind"] == "memory")
    return {"version": version, "asked": len(rows), "skipped": dict(sorted(skipped.items())), "agree": agree,
            "disagree": len(rows) - agree, "memory": memory,
            "unlisted": [r["file"] for r in rows if not r["agree"] and not r["reason"]],
            "agreement": agree / len(rows) if rows else 1.0, "rows": rows}


def fixture_path(version: str) -> Path:
    return ROOT / "fixtures" / "differential" / f"corpus-vllm-{version}.jsonl"


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from differential.harness import venv_for

    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    venv = venv_for(args.version)
    if venv is None:
        sys.exit(f"no vLLM {args.version} environment: eval \"$(bash tools/vllm_env.sh {args.version})\" first")
    items = {p.name: vllm_item(p) for p in corpus_files()}
    skipped = {n: i["skip"] for n, i in items.items() if "skip" in i}
    verdicts = vllm_verdicts(venv, items)
    if args.record:
        with fixture_path(args.version).open("w") as out:
            out.write(json.dumps({"vllm": args.version, "recorded_with": "tools/differential/corpus.py (the vLLM CPU "
                                  "build from tools/vllm_env.sh; its parser, the `vllm serve` argument checks and "
                                  "EngineArgs.create_engine_config(), the model's shipped config.json)",
                                  "skipped": skipped}) + "\n")
            for name in sorted(verdicts):
                out.write(json.dumps({"file": name, "vllm": verdicts[name]}, sort_keys=True) + "\n")
    result = compare(args.version, verdicts, skipped)
    for r in result["rows"]:
        v, c = r["vllm"], r["check"]
        print(f"{'  ' if r['agree'] else '!!'} {r['file']}: vLLM {v['verdict']} "
              f"({v.get('stage')}: {v.get('error', '')} {v.get('message', '')[:160]}) | check {c['verdict']} "
              f"({c.get('message', '') or ','.join(c.get('rules', []))})" + (f" | listed: {r['kind']}" if r["reason"] else ""))
    for name, why in result["skipped"].items():
        print(f"-- {name}: not asked ({why})")
    print(json.dumps({k: v for k, v in result.items() if k not in ("rows", "skipped")}))


if __name__ == "__main__":
    main()
