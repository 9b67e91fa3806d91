"""Launches anywhere in a YAML document whose shape we do not know: a custom Helm chart's values, a kustomize
patch, an Argo workflow, a CI workflow's `run:` steps, a Ray or KServe spec, a Modal or BentoML config.

Three shapes hold a launch: a container-like mapping (`image` + `command`/`args`), a list of strings that is an
argument vector (`[vllm, serve, ...]`, `[bash, -c, script]`), and a string that is a script with a launch in it.
A string that is itself YAML (a kustomize inline patch, a RayService's serveConfigV2) is read as a document of
its own. Each launch takes its context from the mappings around it: `env`, the vLLM `image` (a string, or a
chart's `repository` + `tag`), GPU resources, node labels, and a kustomization's `images:` overrides.

Values a chart's template would turn into flags (`maxModelLen`, `gpuMemoryUtilization`, `extraArgs`, `VLLM_*`
env) are read only for the charts we know (reader/config/forms/charts.py); here they are reported as unread.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..invocation import Hint, Invocation
from ..model import Note, ServingConfig, SourceLoc
from ..tokens import Token
from ..yamlsafe import Path, YamlDoc
from .gpu_hints import gpu_from_labels
from .images import is_vllm_image, version_hint
from .manifests import container_invocation, gpu_limit, gpu_name_hint, script_first_line
from .ray_serve import llm_config_launches
from .scripts import argv_invocation, script_invocations
from .storage_uri import MOUNT, serve_storage_uri, storage_uri_in

ReadOther = Callable[[str, int], list[Invocation]]

_MENTIONS_LAUNCH = re.compile(r"\bvllm\b|vllm\.entrypoints|dynamo\.vllm")
_ARG_KEYS = ("args", "extraArgs", "extra_args", "arguments", "vllmArgs", "serverArgs")
_ENV_KEYS = ("env", "envs", "environment", "extraEnv", "envVars")
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


@dataclass
class Search:
    doc: YamlDoc
    file: Optional[str]
    lines: list[str]
    set_vars: dict[str, str]
    read_other: Optional[ReadOther]
    found: list[Invocation] = field(default_factory=list)
    consumed: list[Path] = field(default_factory=list)
    where: dict[int, Path] = field(default_factory=dict)  # id(launch) -> path of the node it came from

    def add(self, found: list[Invocation], path: Path) -> None:
        for inv in found:
            self.where[id(inv)] = path
        self.found += found
        self.consumed.append(path)


def yaml_launches(doc: YamlDoc, file: Optional[str], lines: list[str], set_vars: dict[str, str],
                  read_other: Optional[ReadOther] = None) -> list[Invocation]:
    search = Search(doc, file, lines, set_vars, read_other)
    _walk(search, doc.data, (), [])
    for inv in search.found:
        _context(search, inv)
    unread = unread_values(doc, search.consumed)
    if unread and search.found:
        search.found[0].notes.append(Note(level="warning", loc=SourceLoc(file=file, line=unread[0][1]), message=(
            "this file's " + ", ".join(f"{key} (line {line})" for key, line in unread) + " look like vLLM "
            "settings a Helm chart turns into flags, but vllm-reader does not know this chart's template, so they "
            "are not read; render the chart (helm template) and read the result, or put them in the command")))
    return search.found


def unread_values(doc: YamlDoc, consumed: list[Path]) -> list[tuple[str, Optional[int]]]:
    """Keys outside the launches found that name a scheduling or memory setting (`maxModelLen`,
    `gpu_memory_utilization`), extra-argument lists, and `VLLM_*` environment entries."""
    wanted = set(ServingConfig.scheduling_fields()) - {"model"}
    out: list[tuple[str, Optional[int]]] = []
    for path, key, value in _pairs(doc.data, ()):
        if any(path[:len(c)] == c for c in consumed):
            continue
        if _CAMEL.sub("_", key).lower().replace("-", "_") in wanted or key in _ARG_KEYS[1:]:
            out.append((key, doc.line(path)))
        elif key == "name" and str(value).startswith("VLLM_"):
            out.append((str(value), doc.line(path)))
    return out


# ---- the walk -----------------------------------------------------------------------------------

def _walk(search: Search, node: Any, path: Path, ancestors: list[dict[str, Any]]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("llm_configs"), list):
            launches = llm_config_launches(node["llm_configs"], path + ("llm_configs",), search.doc, search.file)
            if launches:
                search.add(launches, path)
                return
        if _runs_something(node) and _container(search, node, path, ancestors):
            return
        for key, value in node.items():
            _walk(search, value, path + (key,), ancestors + [node])
    elif isinstance(node, list):
        if node and all(isinstance(v, (str, int, float)) for v in node) and _argv(search, node, path, ancestors):
            return
        for i, item in enumerate(node):
            _walk(search, item, path + (i,), ancestors)
    elif isinstance(node, str):
        _string(search, node, path, ancestors)


def _runs_something(node: dict[str, Any]) -> bool:
    return any(key in node for key in ("command", "cmd", "entrypoint") + _ARG_KEYS)


def _container(search: Search, node: dict[str, Any], path: Path, ancestors: list[dict[str, Any]]) -> bool:
    """A mapping that runs a command: a container (or a kustomize patch of one), or a chart's values block
    whose command or arguments go to a vLLM image."""
    if isinstance(node.get("image"), str) or "name" in node:
        inv = container_invocation(node, path, search.doc, search.file, search.lines, _owner(path))
        if inv is not None:
            search.add([inv], path)
            return True
    image = _image(node, []) if "image" in node else None
    if image and isinstance(node.get("args"), list) and not _has_command(node) and is_vllm_image(image[0]):
        # The mapping's own vLLM image runs its entrypoint (the OpenAI server), which gets the arguments.
        tokens = [Token(str(v), _loc(search, path + ("args", i))) for i, v in enumerate(node["args"])]
        search.add([Invocation(form="yaml-command", label=_label(path + ("args",), search), tokens=tokens,
                               line=_loc(search, path + ("args",)).line)], path)
        return True
    return False


def _has_command(node: dict[str, Any]) -> bool:
    """A command in the mapping or in its image block (`image: {repository, command}`)."""
    image = node.get("image")
    return any(isinstance(n.get(k), (list, str)) for n in (node, image if isinstance(image, dict) else {})
               for k in ("command", "cmd", "entrypoint"))


def _argv(search: Search, items: list[Any], path: Path, ancestors: list[dict[str, Any]]) -> bool:
    tokens = [Token(str(v), _loc(search, path + (i,))) for i, v in enumerate(items)]
    inv = argv_invocation(tokens, _env(ancestors), "yaml-command", _label(path, search), search.file, search.set_vars)
    if inv is None:
        return False
    inv.label = _label(path, search)
    search.add([inv], path)
    return True


def _string(search: Search, text: str, path: Path, ancestors: list[dict[str, Any]]) -> None:
    first = script_first_line(search.doc.line(path), search.lines)
    if _MENTIONS_LAUNCH.search(text):
        found = script_invocations(text, search.file, {**_env(ancestors), **search.set_vars}, "yaml-command",
                                   first_line=first, read_other=search.read_other)
        if found:
            for inv in found:
                inv.label = f"{_label(path, search)}, {inv.label}"
            search.add(found, path)
            return
    if "\n" in text.strip() and ":" in text and search.read_other is not None:
        found = search.read_other(text, first)  # a YAML document inside a string (kustomize patch, serveConfigV2)
        if found:
            search.add(found, path)


# ---- context from the surroundings --------------------------------------------------------------

def _context(search: Search, inv: Invocation) -> None:
    """What the mappings around a launch say: env, image and version, GPUs."""
    path = _path_of(search, inv)
    ancestors = _ancestors(search.doc.data, path)
    inv.env = {**_env(ancestors), **inv.env}
    loc = SourceLoc(file=search.file, line=inv.line)
    if inv.image is None:
        image = _image({}, ancestors) or _kustomize_image(search.doc.data)
        if image:
            inv.image = image[0]
            inv.version = inv.version or version_hint(image[0], SourceLoc(file=search.file,
                                                                          line=search.doc.line(image[1])))
    if inv.gpu_count is None:
        for node in reversed(ancestors):
            count = gpu_limit(node)
            if count is not None:
                inv.gpu_count = Hint(count, "the GPU resource request around the command", loc)
                break
    if inv.gpu_name is None:
        hint = gpu_from_labels(search.doc.data)
        if hint is not None:
            inv.gpu_name = gpu_name_hint(hint, loc, inv.notes)
    _storage_uri(search, inv)


def _storage_uri(search: Search, inv: Invocation) -> None:
    """A KServe chart's values: the runtime's `--model=/mnt/models` serves the `storageUri` (or `model.uri`) given."""
    found = storage_uri_in(search.doc.data) if any(MOUNT in tok.text for tok in inv.tokens) else None
    if found is not None:
        uri, path = found
        key = ".".join(str(p) for p in path) + (".uri" if path[-1] == "model" else "")
        serve_storage_uri(inv, uri, SourceLoc(file=search.file, line=search.doc.line(path)), key)


def _path_of(search: Search, inv: Invocation) -> Path:
    return search.where.get(id(inv), ())


def _ancestors(data: Any, path: Path) -> list[dict[str, Any]]:
    out, node = [], data
    for part in path:
        if isinstance(node, dict):
            out.append(node)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    if isinstance(node, dict):
        out.append(node)
    return out


def _image(node: dict[str, Any], ancestors: list[dict[str, Any]]) -> Optional[tuple[str, Path]]:
    """The nearest image: `image: repo:tag`, or a chart's `image: {repository, tag}`."""
    for candidate in [node] + list(reversed(ancestors)):
        if candidate.get("repository") and isinstance(candidate.get("repository"), str):
            tag = candidate.get("tag")  # this mapping is a chart's image block
            return str(candidate["repository"]) + (f":{tag}" if tag not in (None, "") else ""), ()
        value = candidate.get("image")
        if isinstance(value, str) and value:
            return value, ()
        if isinstance(value, dict) and value.get("repository"):
            tag = value.get("tag")
            return str(value["repository"]) + (f":{tag}" if tag not in (None, "") else ""), ()
    return None


def _kustomize_image(data: Any) -> Optional[tuple[str, Path]]:
    """A kustomization's `images:` override of a vLLM image (newName / newTag)."""
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        return None
    for i, item in enumerate(data["images"]):
        if isinstance(item, dict) and is_vllm_image(str(item.get("newName") or item.get("name") or "")):
            name = str(item.get("newName") or item.get("name"))
            tag = item.get("newTag")
            return (f"{name}:{tag}" if tag else name), ("images", i)
    return None


def _env(ancestors: list[dict[str, Any]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for node in ancestors:
        for key in _ENV_KEYS:
            value = node.get(key)
            if isinstance(value, dict):
                env.update({str(k): str(v) for k, v in value.items() if isinstance(v, (str, int, float, bool))})
            elif isinstance(value, list):
                env.update({str(item["name"]): str(item["value"]) for item in value
                            if isinstance(item, dict) and "name" in item and "value" in item})
    return env


def _pairs(node: Any, path: Path):
    if isinstance(node, dict):
        for key, value in node.items():
            yield path + (key,), str(key), value
            yield from _pairs(value, path + (key,))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _pairs(item, path + (i,))


def _loc(search: Search, path: Path) -> SourceLoc:
    return SourceLoc(file=search.file, line=search.doc.line(path))


def _label(path: Path, search: Search) -> str:
    dotted = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in path).replace(".[", "[")
    return f"{dotted or 'document'} (line {search.doc.line(path)})"


def _owner(path: Path) -> str:
    return ".".join(str(p) for p in path if isinstance(p, str)) or "document"

