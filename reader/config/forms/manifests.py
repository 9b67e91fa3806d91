"""Kubernetes manifests and custom resources: find the vLLM containers and read their command.

Works for any object that nests containers (Deployment, StatefulSet, Pod, Job, LeaderWorkerSet,
RayCluster, AIBrix RayClusterFleet, llm-d patches, NVIDIA DynamoGraphDeployment ...) by walking
the document for container-shaped mappings. KServe LLMInferenceService is translated from its
spec fields; a KAITO Workspace preset is refused, because it holds no vLLM arguments.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Optional

from ...errors import ReaderError
from ..invocation import ConfigEntry, Hint, Invocation
from ..model import Note, SourceLoc
from ..shell import run_script
from ..tokens import Token
from ..yamlsafe import Path, YamlDoc
from .commands import find_launch
from .images import is_vllm_image, version_hint
from .scripts import shift
from .storage_uri import parse_model_uri
from .gpu_hints import GpuHint, gpu_from_labels, mig_slice

_SHELLS = {"bash", "sh", "zsh", "dash", "ash"}
_GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gpu")
_K8S_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def looks_like_kubernetes(doc: Any) -> bool:
    return isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc


def invocations_from_manifests(docs: list[YamlDoc], file: Optional[str], text_lines: list[str]) -> list[Invocation]:
    found: list[Invocation] = []
    for doc in docs:
        data = doc.data
        if not looks_like_kubernetes(data):
            continue
        kind = str(data.get("kind"))
        name = str((data.get("metadata") or {}).get("name", "?"))
        if kind == "Workspace" and "kaito" in str(data.get("apiVersion", "")):
            _refuse_kaito(data, doc, file)
        if kind == "LLMInferenceService":
            found.append(_kserve_llm_service(data, doc, file, f"{kind}/{name}"))
            continue
        labels_gpu = gpu_from_labels(data)
        for path, container in containers(data):
            runtime = _lws_env(data, path) if kind == "LeaderWorkerSet" else {}
            inv = container_invocation(container, path, doc, file, text_lines, f"{kind}/{name}", runtime)
            if inv is None:
                continue
            _note_runtime_env(inv, runtime, container, SourceLoc(file=file, line=doc.line(("spec",))))
            if inv.gpu_count is None:
                inherited = _ancestor_gpus(data, path)
                if inherited is not None:
                    inv.gpu_count = Hint(inherited, "GPU limit of the enclosing component",
                                         SourceLoc(file=file, line=doc.line(path)))
            group = _group_gpus(data, kind)
            if group is not None:
                inv.gpu_count = Hint(group[0], group[1], SourceLoc(file=file, line=doc.line(("spec",))))
                inv.num_nodes = Hint(group[2], group[1], SourceLoc(file=file, line=doc.line(("spec",))))
            if labels_gpu and inv.gpu_name is None:
                inv.gpu_name = gpu_name_hint(labels_gpu, SourceLoc(file=file, line=doc.line(path)), inv.notes)
            if kind in _REPLICATED:
                set_replicas(inv, (data.get("spec") or {}).get("replicas"), f"{kind} spec.replicas",
                             SourceLoc(file=file, line=doc.line(("spec", "replicas"))))
            found.append(inv)
    return found


# Workloads whose spec.replicas copies the whole launch (for a LeaderWorkerSet: whole groups, each one vLLM).
_REPLICATED = ("Deployment", "StatefulSet", "ReplicaSet", "LeaderWorkerSet")


def set_replicas(inv: Invocation, value: Any, origin: str, loc: SourceLoc) -> None:
    """Copies of the launch behind one service: read, and said when there are several."""
    try:
        count = int(value)
    except (TypeError, ValueError):
        return
    if count < 1:
        return
    inv.replicas = Hint(count, origin, loc)
    if count > 1:
        inv.notes.append(Note(level="info", loc=loc, message=(
            f"{count} replicas ({origin}): each runs this launch on its own GPUs, and every figure here is one "
            "replica's; a workload given with `scope: service` is split between them in the diagnosis")))


def _group_gpus(data: dict[str, Any], kind: str) -> Optional[tuple[int, str, int]]:
    """GPUs of a multi-pod group that one vLLM instance spans: (total, how, pods)."""
    spec = data.get("spec") or {}
    if kind in ("RayCluster", "RayClusterFleet", "RayService"):
        cluster = ((spec.get("template") or {}).get("spec")) or spec.get("rayClusterSpec") or spec
        head = _pod_gpus((cluster.get("headGroupSpec") or {}).get("template"))
        total, pods, parts = head, 1, [f"head {head}"]
        for group in cluster.get("workerGroupSpecs") or []:
            replicas = int(group.get("replicas", 1) or 1)
            per = _pod_gpus(group.get("template"))
            total += replicas * per
            pods += replicas
            parts.append(f"{replicas} x {per}")
        return (total, "GPUs of the Ray cluster (" + " + ".join(parts) + ")", pods) if total else None
    if kind == "LeaderWorkerSet":
        template = spec.get("leaderWorkerTemplate") or {}
        size = int(template.get("size", 1) or 1)
        per = _pod_gpus(template.get("workerTemplate") or template.get("leaderTemplate"))
        if per:
            return size * per, f"GPUs of the LeaderWorkerSet group ({size} pods x {per})", size
    return None


# The variables the LeaderWorkerSet controller adds to every container of a group's pods: the group's size,
# the pod's index in it (0 for the leader) and the leader's address, <name>-<group>.<name>.<namespace>
# (kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go LwsGroupSize, LwsWorkerIndex,
# LwsLeaderAddress @ 47a6181f092baa7be1475a75480fa717ca4d5647; pkg/webhooks/pod_webhook.go sets the size from
# the template's `size`). The launch read is the first group's leader: the leader template's, or the worker
# template's when it is the only one (the leader then runs it too).
_LWS_SIZE, _LWS_INDEX, _LWS_LEADER = "LWS_GROUP_SIZE", "LWS_WORKER_INDEX", "LWS_LEADER_ADDRESS"


def _lws_env(data: dict[str, Any], path: Path) -> dict[str, str]:
    template = (data.get("spec") or {}).get("leaderWorkerTemplate") or {}
    try:
        size = int(template.get("size", 1) or 1)
    except (TypeError, ValueError):
        return {}
    meta = data.get("metadata") or {}
    name, namespace = str(meta.get("name", "lws")), str(meta.get("namespace", "default"))
    in_workers = "workerTemplate" in path and bool(template.get("leaderTemplate"))
    return {_LWS_SIZE: str(size), _LWS_INDEX: "1" if in_workers else "0",
            _LWS_LEADER: f"{name}-0.{name}.{namespace}"}


def _note_runtime_env(inv: Invocation, runtime: dict[str, str], container: dict[str, Any], loc: SourceLoc) -> None:
    text = " ".join(str_list(container.get("command")) + str_list(container.get("args")))
    used = [name for name in runtime if name in text]
    if not used:
        return
    pod = "the group's leader" if runtime.get(_LWS_INDEX) == "0" else "the group's first worker"
    values = ", ".join(f"{name}={runtime[name]}" for name in used)
    inv.notes.append(Note(level="info", loc=loc, message=(
        f"{values}: what the LeaderWorkerSet controller sets in {pod} pod (the group size is the template's "
        f"`size`); override with --set NAME=VALUE")))


def _ancestor_gpus(data: Any, path: Path) -> Optional[int]:
    """A GPU limit set on a component that encloses the container (e.g. a Dynamo service)."""
    node, found = data, None
    for part in path:
        if isinstance(node, dict):
            count = gpu_limit(node)
            found = count if count is not None else found
        node = node[part] if isinstance(node, (dict, list)) else None
    return found


def _pod_gpus(template: Any) -> int:
    if not isinstance(template, dict):
        return 0
    return sum(gpu_limit(c) or 0 for c in ((template.get("spec") or {}).get("containers") or []) if isinstance(c, dict))


# ---- containers ----------------------------------------------------------------------------

def containers(node: Any, path: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    if isinstance(node, dict):
        has_image = isinstance(node.get("image"), str)
        runs_something = "command" in node or "args" in node
        if (has_image and runs_something) or (runs_something and "name" in node):
            yield path, node  # a container, or a kustomize patch of one (no image)
            return
        for key, value in node.items():
            yield from containers(value, path + (key,))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from containers(item, path + (i,))


def container_invocation(container: dict[str, Any], path: Path, doc: YamlDoc, file: Optional[str],
                          text_lines: list[str], owner: str,
                          runtime_env: Optional[dict[str, str]] = None) -> Optional[Invocation]:
    command = str_list(container.get("command"))
    args = str_list(container.get("args"))
    image = str(container.get("image", ""))
    # A kustomize patch of a container has no image: its name says which container it patches.
    mentions_vllm = is_vllm_image(image) or any("vllm" in part for part in command + args) or (
        not image and "vllm" in str(container.get("name", "")).lower() and bool(command or args))
    if not mentions_vllm:
        return None
    env = {**(runtime_env or {}), **_env(container.get("env"))}
    where = container.get("name") or ".".join(str(p) for p in path if isinstance(p, str))
    label = f"container '{where}' in {owner}"
    items = [(part, path + ("command", i)) for i, part in enumerate(command)] + \
            [(part, path + ("args", i)) for i, part in enumerate(args)]
    inv = _shell_form(items, env, doc, file, text_lines, label) if _is_shell(command + args) else \
        _argv_form(items, env, doc, file, label, image, bool(command))
    if inv is None:
        return None
    inv.image = image or None
    inv.version = version_hint(image, SourceLoc(file=file, line=doc.line(path + ("image",))))
    count = gpu_limit(container)
    where = SourceLoc(file=file, line=doc.line(path + ("resources",)))
    if count is not None:
        inv.gpu_count = Hint(count, "the container's GPU resource limit", where)
    mig = mig_slice(container.get("resources"))
    if mig is not None:
        inv.gpu_count = Hint(mig[1], f"the container's MIG resource nvidia.com/mig-{mig[0]}", where)
        inv.notes.append(Note(level="warning", loc=where, key="resources", message=(
            f"the container asks for {mig[1]} MIG slice(s) {mig[0]}: vLLM sees each as a GPU with that share of "
            "the card's memory and compute, which the GPU catalog does not model; give --gpu for the closest part")))
    return inv


def gpu_name_hint(hint: GpuHint, loc: SourceLoc, notes: list[Note]) -> Hint:
    """The GPU a file's node labels name; when they allow several, the first is taken and the others said."""
    if hint.alternatives:
        notes.append(Note(level="info", loc=loc, message=(
            f"{hint.origin} is the first of the values the file allows (others: {', '.join(hint.alternatives)}); "
            f"read as {hint.name}. Give --gpu for another")))
    return Hint(hint.name, hint.origin, loc)


def _argv_form(items: list[tuple[str, Path]], env: dict[str, str], doc: YamlDoc, file: Optional[str], label: str,
               image: str, has_command: bool) -> Optional[Invocation]:
    tokens = [_k8s_token(text, env, SourceLoc(file=file, line=doc.line(p))) for text, p in items]
    inv = find_launch(list(tokens), dict(env), "kubernetes", label, file)
    patch_of_vllm = not image and "vllm" in label.split(" in ", 1)[0].lower()
    if inv is None and not has_command and tokens and (is_vllm_image(image) or patch_of_vllm):
        # No command: the image's entrypoint (the OpenAI server) receives the args; a kustomize patch (no image)
        # of a container named for vLLM keeps the base's image.
        inv = Invocation(form="kubernetes", label=label, tokens=tokens, env=dict(env),
                         line=tokens[0].loc.line if tokens and tokens[0].loc else None)
    if inv is not None:
        inv.form = "kubernetes"
        inv.env = {**env, **inv.env}
    return inv


def _shell_form(items: list[tuple[str, Path]], env: dict[str, str], doc: YamlDoc, file: Optional[str],
                text_lines: list[str], label: str) -> Optional[Invocation]:
    """`command: [bash, -c]` + a script string: run our shell reader over the script."""
    script_index = next(i for i, (text, _) in enumerate(items) if _is_shell_flag_end(items, i))
    script, script_path = items[script_index]
    script = _expand_k8s(script, env)
    first_line = script_first_line(doc.line(script_path), text_lines)
    commands = run_script(script, file, dict(env))
    for command in commands:
        shifted = [shift(tok, first_line - 1) for tok in command.tokens]
        inv = find_launch(shifted, {**env, **command.env}, "kubernetes", label, file)
        if inv is not None:
            inv.form = "kubernetes"
            return inv
    return None


def _is_shell(parts: list[str]) -> bool:
    return bool(parts) and parts[0].rsplit("/", 1)[-1] in _SHELLS and any(re.fullmatch(r"-\w*c\w*", p) for p in parts[1:3])


def _is_shell_flag_end(items: list[tuple[str, Path]], i: int) -> bool:
    """The script is the first item after the shell and its options (`-c`, `-lc`, `--`)."""
    if i == 0:
        return False
    return not items[i][0].startswith("-") and all(text.startswith("-") for text, _ in items[1:i])


def script_first_line(node_line: Optional[int], text_lines: list[str]) -> int:
    """A block scalar (`- |`) starts on the line after its indicator."""
    if node_line is None:
        return 1
    raw = text_lines[node_line - 1].rstrip() if 0 < node_line <= len(text_lines) else ""
    return node_line + 1 if re.search(r"[|>][-+]?\d*$", raw) else node_line


def _k8s_token(text: str, env: dict[str, str], loc: SourceLoc) -> Token:
    expanded = _expand_k8s(text, env)
    unresolved = tuple(m.group(0) for m in _K8S_VAR.finditer(expanded))
    return Token(expanded, loc, unresolved)


def _expand_k8s(text: str, env: dict[str, str]) -> str:
    """Kubernetes expands $(VAR) from the container's env in command/args; unknown ones stay literal."""
    return _K8S_VAR.sub(lambda m: env.get(m.group(1), m.group(0)), text)


def str_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def _env(value: Any) -> dict[str, str]:
    env: dict[str, str] = {}
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and "name" in item and "value" in item:
                env[str(item["name"])] = str(item["value"])
    elif isinstance(value, dict):
        env = {str(k): str(v) for k, v in value.items() if v is not None}
    return env


def gpu_limit(container: dict[str, Any]) -> Optional[int]:
    resources = container.get("resources") or {}
    for section in ("limits", "requests"):
        block = resources.get(section) or {}
        for key in _GPU_RESOURCES:
            if key in block:
                try:
                    return int(str(block[key]).strip())
                except ValueError:
                    return None
    return None


# ---- custom resources --------------------------------------------------------------------

def _kserve_llm_service(data: dict[str, Any], doc: YamlDoc, file: Optional[str], label: str) -> Invocation:
    spec = data.get("spec") or {}
    model = spec.get("model") or {}
    inv = Invocation(form="kserve-llminferenceservice", label=label, line=doc.line(("spec",)))
    # spec.model.uri is where the weights come from (a storage URI, read by the loader); name is what is served.
    name = model.get("uri") or model.get("name")
    if name:
        inv.model = Hint(str(name), "spec.model", SourceLoc(file=file, line=doc.line(("spec", "model"))))
    flag_of = {"tensor": "tensor_parallel_size", "pipeline": "pipeline_parallel_size", "data": "data_parallel_size",
               "dataLocal": "data_parallel_size_local"}
    for key, value in (spec.get("parallelism") or {}).items():
        if key in flag_of:
            inv.entries.append(ConfigEntry(flag_of[key], int(value), SourceLoc(file=file, line=doc.line(
                ("spec", "parallelism", key))), spelling=f"spec.parallelism.{key}"))
        elif key == "expert" and value:
            inv.entries.append(ConfigEntry("enable_expert_parallel", True, SourceLoc(file=file, line=doc.line(
                ("spec", "parallelism", key))), spelling="spec.parallelism.expert"))
    speculator = spec.get("speculator")
    if isinstance(speculator, dict):
        config = {k: _numeric(v) for k, v in (speculator.get("config") or {}).items()}
        uri = parse_model_uri((speculator.get("model") or {}).get("uri"))
        if uri:
            config["model"] = uri.model
        inv.entries.append(ConfigEntry("speculative_config", config, SourceLoc(file=file, line=doc.line(
            ("spec", "speculator"))), spelling="spec.speculator"))
    containers = ((spec.get("template") or {}).get("containers")) or []
    for i, container in enumerate(containers):
        if isinstance(container, dict):
            count = gpu_limit(container)
            if count is not None:
                inv.gpu_count = Hint(count, "spec.template container GPU limit", SourceLoc(file=file, line=doc.line(
                    ("spec", "template", "containers", i, "resources"))))
            inv.env.update(_env(container.get("env")))
            for j, arg in enumerate(str_list(container.get("args"))):
                inv.tokens.append(Token(arg, SourceLoc(file=file, line=doc.line(
                    ("spec", "template", "containers", i, "args", j)))))
    inv.notes.append(Note(level="info", loc=SourceLoc(file=file, line=doc.line(("spec",))), message=(
        "KServe builds the vLLM command from spec.model, spec.parallelism and spec.speculator; they are read "
        "as the equivalent vLLM flags" + ("; spec.prefill describes a separate prefill pool (disaggregated "
                                           "serving), which is not analysed" if "prefill" in spec else ""))))
    return inv


def _numeric(value: Any) -> Any:
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d*\.\d+", value.strip()):
        return float(value)
    return value


def _refuse_kaito(data: dict[str, Any], doc: YamlDoc, file: Optional[str]) -> None:
    preset = (((data.get("inference") or {}).get("preset")) or {}).get("name", "?")
    raise ReaderError(
        f"this is a KAITO Workspace using preset '{preset}': KAITO generates the vLLM command from the preset, "
        "so the file holds no vLLM arguments to check. Read the generated Deployment instead "
        "(kubectl get deployment -o yaml) or write the equivalent `vllm serve` line.",
        file=file, line=doc.line(("inference", "preset")), key="inference.preset")
