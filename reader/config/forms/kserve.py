"""KServe InferenceService (v1beta1) with its ServingRuntime: the runtime's container command, plus what the
InferenceService's `spec.predictor.model` adds.

KServe starts the runtime's container (`spec.containers` of the ServingRuntime / ClusterServingRuntime named by
`predictor.model.runtime`, or the one supporting its model format), appends `predictor.model.args` to the
runtime's args, merges `env` and `resources`, fills `{{.Name}}` with the InferenceService's name, and
downloads `storageUri` to /mnt/models. So a launch whose model is /mnt/models serves the storage URI.
When the runtime is not in the file, only the InferenceService's own arguments are read, and the report
says so. The Hugging Face runtime's own options (`--model_name`, `--model_id`, `--backend`, ...) are not vLLM
flags and are set aside; `--model_id` names the model.
Sources: https://kserve.github.io/website/latest/modelserving/servingruntimes/ and
kserve python/huggingfaceserver/huggingfaceserver/__main__.py (its argument parser).
"""
from __future__ import annotations

from typing import Any, Optional

from ..invocation import Hint, Invocation
from ..model import Note, SourceLoc
from ..tokens import Token
from ..yamlsafe import YamlDoc
from .gpu_hints import gpu_from_labels
from .manifests import container_invocation, containers, gpu_limit, gpu_name_hint, set_replicas, str_list
from .storage_uri import serve_storage_uri

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
_HF_SERVER_OWN = {"--model_name", "--model_id", "--model_dir", "--model_revision", "--tokenizer_revision", "--backend",
                  "--task", "--return_probabilities", "--disable_lower_case", "--disable_special_tokens",
                  "--tensor_input_names", "--return_token_type_ids", "--return_raw_logits", "--max_length",
                  "--http_port", "--grpc_port", "--predictor_host", "--workers", "--enable_docs_url"}


def serving_runtimes(docs: list[YamlDoc]) -> dict[str, YamlDoc]:
    return {str((d.data.get("metadata") or {}).get("name", "")): d for d in docs
            if isinstance(d.data, dict) and d.data.get("kind") in RUNTIME_KINDS}


def used_runtimes(docs: list[YamlDoc], runtimes: dict[str, YamlDoc]) -> set[str]:
    used = set()
    for doc in docs:
        if isinstance(doc.data, dict) and doc.data.get("kind") == "InferenceService":
            runtime = _runtime_for(_model_spec(doc.data), runtimes)
            if runtime is not None:
                used.add(runtime[0])
    return used


def inference_service(doc: YamlDoc, runtimes: dict[str, YamlDoc], file: Optional[str],
                      lines: list[str]) -> list[Invocation]:
    data = doc.data
    name = str((data.get("metadata") or {}).get("name", "?"))
    spec = _model_spec(data)
    base = ("spec", "predictor", "model")
    runtime = _runtime_for(spec, runtimes)
    inv = _runtime_launch(runtime, file, lines, name) if runtime else None
    if inv is None:
        inv = Invocation(form="kserve-inferenceservice", label=f"InferenceService/{name}", line=doc.line(base))
        inv.notes.append(Note(level="warning", loc=SourceLoc(file=file, line=doc.line(base)), message=(
            "the ServingRuntime that runs this InferenceService is not in this file, so only "
            "spec.predictor.model's own arguments are read (add the runtime's YAML to the same file to read its "
            "command too)")))
    inv.form, inv.label = "kserve-inferenceservice", f"InferenceService/{name}" + (
        f" on ServingRuntime/{runtime[0]}" if runtime else "")
    extra = [Token(a.replace("{{.Name}}", name), SourceLoc(file=file, line=doc.line(base + ("args", i))))
             for i, a in enumerate(str_list(spec.get("args")))]
    inv.tokens = [_named(tok, name) for tok in inv.tokens] + extra
    _hf_server_options(inv)
    inv.env.update(_env(spec.get("env")))
    count = gpu_limit(spec)
    if count is not None:
        inv.gpu_count = Hint(count, "spec.predictor.model resources", SourceLoc(file=file, line=doc.line(
            base + ("resources",))))
    labels = gpu_from_labels(data)
    if labels is not None and inv.gpu_name is None:
        inv.gpu_name = gpu_name_hint(labels, SourceLoc(file=file, line=doc.line(("spec", "predictor"))), inv.notes)
    predictor = (data.get("spec") or {}).get("predictor") or {}
    set_replicas(inv, predictor.get("minReplicas"), "InferenceService spec.predictor.minReplicas",
                 SourceLoc(file=file, line=doc.line(("spec", "predictor", "minReplicas"))))
    uri = spec.get("storageUri")
    if uri:
        serve_storage_uri(inv, str(uri), SourceLoc(file=file, line=doc.line(base + ("storageUri",))),
                          "spec.predictor.model.storageUri")
    return [inv]


def _model_spec(data: dict[str, Any]) -> dict[str, Any]:
    return (((data.get("spec") or {}).get("predictor") or {}).get("model")) or {}


def _runtime_for(spec: dict[str, Any], runtimes: dict[str, YamlDoc]) -> Optional[tuple[str, YamlDoc]]:
    wanted = spec.get("runtime")
    if wanted and str(wanted) in runtimes:
        return str(wanted), runtimes[str(wanted)]
    fmt = str((spec.get("modelFormat") or {}).get("name", "")).lower()
    for name, doc in runtimes.items():
        formats = [str(f.get("name", "")).lower() for f in (doc.data.get("spec") or {}).get("supportedModelFormats")
                   or [] if isinstance(f, dict)]
        if not wanted and (fmt in formats or len(runtimes) == 1):
            return name, doc
    return None


def _runtime_launch(runtime: tuple[str, YamlDoc], file: Optional[str], lines: list[str],
                    isvc: str) -> Optional[Invocation]:
    name, doc = runtime
    for path, container in containers(doc.data):
        inv = container_invocation(container, path, doc, file, lines, f"ServingRuntime/{name}")
        if inv is not None:
            return inv
    return None


def _named(tok: Token, name: str) -> Token:
    if "{{.Name}}" not in tok.text:
        return tok
    return Token(tok.text.replace("{{.Name}}", name), tok.loc, tok.unresolved, tok.spelling, tok.typed_value)


def _hf_server_options(inv: Invocation) -> None:
    """Set aside KServe Hugging Face server options; `--model_id` names the model."""
    kept, dropped = [], []
    tokens = inv.tokens
    i = 0
    while i < len(tokens):
        flag, eq, value = tokens[i].text.partition("=")
        if flag in _HF_SERVER_OWN:
            if not eq and i + 1 < len(tokens) and not tokens[i + 1].text.startswith("-"):
                value, i = tokens[i + 1].text, i + 1
            if flag == "--model_id" and value:
                inv.model = Hint(value, "--model_id of the KServe Hugging Face server", tokens[i].loc)
            dropped.append(flag)
        else:
            kept.append(tokens[i])
        i += 1
    if dropped:
        inv.tokens = kept
        inv.notes.append(Note(level="info", loc=kept[0].loc if kept else None, message=(
            "KServe's Hugging Face server options " + ", ".join(dict.fromkeys(dropped))
            + " are not vLLM flags and are set aside")))


def _env(value: Any) -> dict[str, str]:
    if isinstance(value, list):
        return {str(e["name"]): str(e["value"]) for e in value if isinstance(e, dict) and "name" in e and "value" in e}
    return {}
