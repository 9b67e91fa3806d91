"""Find the vLLM launches in a file's text, whatever form it takes; the form is told by content (sniff.py).

Forms that hold other forms (a Markdown code block, a here-document, a YAML string holding a YAML patch) read
what they hold through `read_launches` again; a block we cannot read there is skipped, not an error, since it
is the file's data and not its launch. A file with no launch at all is bad input, naming what was searched.
"""
from __future__ import annotations

import json
import re
from typing import Any, Optional

from ..errors import ReaderError
from .flagtable import suggestions_any_version
from .forms import charts, kserve, kubeai, manifests, others, skypilot
from .forms.config_yaml import config_entries, is_vllm_config
from .forms.dockerfile import dockerfile
from .forms.markdown import markdown
from .forms.procfile import procfile
from .forms.recipes import justfile, makefile
from .forms.scripts import script_invocations
from .forms.sniff import kind_of, structured_yaml
from .forms.yaml_search import unread_values, yaml_launches
from .invocation import Invocation
from .yamlsafe import YamlDoc, load_yaml_documents
from ..logs.detect import is_log

FORMS_HELP = ("a `vllm serve --config` YAML, a shell script or command line (`vllm serve ...`, "
              "`python -m vllm.entrypoints.openai.api_server ...`, `docker run ... vllm/vllm-openai ...`), a "
              "Dockerfile, a Makefile or justfile, a Procfile, Markdown with code blocks, a Kubernetes manifest or "
              "kustomize patch, Helm chart values, docker-compose, a SkyPilot task, a CI workflow or any YAML whose "
              "strings or command lists run vLLM, or vLLM's benchmark JSON")

_KIND_WORDS = {"json": "JSON file", "markdown": "Markdown file", "dockerfile": "Dockerfile", "makefile": "Makefile",
               "justfile": "justfile", "procfile": "Procfile", "yaml": "YAML file", "shell": "script"}


def find_invocations(path: str, text: str, set_vars: dict[str, str]) -> list[Invocation]:
    if is_log(text, path):
        from ..logs.form import log_invocations
        return log_invocations(path, text)
    found, searched, kind = read_launches(text, path, set_vars, path)
    if not found and kind == "makefile":
        _raise_if_broken_yaml(text, path)
    if not found:
        raise ReaderError(f"no vLLM launch found in this {_KIND_WORDS.get(kind, kind)}: {searched}. "
                          f"vllm-reader reads {FORMS_HELP}.", file=path)
    return found


def _raise_if_broken_yaml(text: str, path: Optional[str]) -> None:
    """A YAML file with a stray tab looks like a Makefile's recipe: when nothing in it launches vLLM, and its other
    lines read as YAML, its real problem is the YAML error (on its line), not a missing launch."""
    tabbed = [ln for ln in text.splitlines() if ln.startswith("\t")]
    as_keys = all(re.match(r"\s*[\w.-]+:(\s|$)", ln) for ln in tabbed)
    if not _yaml_named(path) and not (as_keys and structured_yaml("\n".join(ln for ln in text.splitlines()
                                                                         if "\t" not in ln))):
        return
    load_yaml_documents(text, path)  # raises the YAML error, naming the line


def _yaml_named(path: Optional[str]) -> bool:
    return bool(path) and str(path).lower().endswith((".yaml", ".yml"))


def read_launches(text: str, path: Optional[str], set_vars: dict[str, str], name: Optional[str],
                  kind: Optional[str] = None) -> tuple[list[Invocation], str, str]:
    """(launches, what was searched, the kind of text) for `text`; `name` (a file name) only breaks ties."""
    kind = kind or kind_of(text, name)

    def read_other(body: str, line: int, inner: Optional[str] = None) -> list[Invocation]:
        try:
            return read_launches("\n" * (line - 1) + body, path, set_vars, None, inner)[0]
        except ReaderError:
            return []

    if kind == "yaml-or-shell":
        if structured_yaml(text):
            # A command line with `": "` in a quoted JSON value also parses as a YAML mapping: the form that
            # finds a launch wins.
            found, searched = _yaml_invocations(path, text, set_vars, read_other)
            if found:
                return found, searched, "yaml"
            as_script = script_invocations(text, path, set_vars, read_other=read_other)
            return (as_script, "", "shell") if as_script else (found, searched, "yaml")
        kind = "shell"
    if kind == "json":
        return _json_invocations(path, text), "searched the JSON", kind
    if kind == "markdown":
        return (*markdown(text, read_other), kind)
    if kind == "dockerfile":
        return (*dockerfile(text, path, set_vars), kind)
    if kind == "makefile":
        return (*makefile(text, path, set_vars), kind)
    if kind == "justfile":
        return (*justfile(text, path, set_vars), kind)
    if kind == "procfile":
        return (*procfile(text, path, set_vars), kind)
    if kind == "yaml":
        return (*_yaml_invocations(path, text, set_vars, read_other), kind)
    powershell = bool(name) and str(name).lower().endswith(".ps1")
    found = script_invocations(text, path, set_vars, powershell=powershell, read_other=read_other)
    return found, f"searched {_count_lines(text)} line(s) for `vllm serve`, `python -m vllm.entrypoints...` or " \
                  "`docker run ... vllm`", "shell"


def _count_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def _json_invocations(path: Optional[str], text: str) -> list[Invocation]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ReaderError(f"malformed JSON: {err.msg}.", file=path, line=err.lineno) from None
    if others.is_benchmark_json(data):
        return others.benchmark_json(data, path, text)
    if isinstance(data, dict):
        return [config_entries(YamlDoc(data, {}), path)]
    raise ReaderError(f"this JSON is not a vLLM config. vllm-reader reads {FORMS_HELP}.", file=path)


def _yaml_invocations(path: Optional[str], text: str, set_vars: dict[str, str],
                      read_other) -> tuple[list[Invocation], str]:
    docs = [d for d in load_yaml_documents(text, path) if d.data is not None]
    if not docs:
        raise ReaderError("the file is empty.", file=path)
    lines = text.splitlines()
    first = docs[0].data
    known = _known_form(docs, path, lines, set_vars)
    if known:
        return known, "its known form"
    if is_vllm_config(first):
        return [config_entries(docs[0], path)], "its keys"
    found = [inv for doc in docs for inv in yaml_launches(doc, path, lines, set_vars, read_other)]
    if found:
        return found, "every string, argument list and container"
    if isinstance(first, dict) and _a_config_with_typos(first):
        return [config_entries(docs[0], path)], "its keys"  # vLLM would stop on the unknown key: so do we
    if isinstance(first, str) and len(docs) == 1:
        return script_invocations(text, path, set_vars), "its one string as a script"
    return [], _searched_yaml(docs, lines)


def _known_form(docs: list[YamlDoc], path: Optional[str], lines: list[str],
                set_vars: dict[str, str]) -> list[Invocation]:
    first = docs[0].data
    if any(manifests.looks_like_kubernetes(d.data) for d in docs):
        return _kubernetes(_with_set_env(docs, set_vars), path, lines)
    if charts.is_production_stack(first):
        return charts.production_stack(docs[0], path)
    if charts.is_ai_on_eks(first):
        return charts.ai_on_eks(docs[0], path)
    if others.is_compose(first):
        return others.compose(docs[0], path)
    if skypilot.is_skypilot(first):
        return skypilot.skypilot(docs[0], path, lines, set_vars)
    return []


def _kubernetes(docs: list[YamlDoc], path: Optional[str], lines: list[str]) -> list[Invocation]:
    """Kubernetes objects: KServe InferenceServices with their runtimes, KubeAI Models, anything with containers."""
    runtimes = kserve.serving_runtimes(docs)
    used = kserve.used_runtimes(docs, runtimes)
    found: list[Invocation] = []
    for doc in docs:
        data = doc.data
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind == "InferenceService":
            found += kserve.inference_service(doc, runtimes, path, lines)
        elif kubeai.is_kubeai_model(data):
            found += kubeai.kubeai_model(doc, path)
        elif kind in kserve.RUNTIME_KINDS and str((data.get("metadata") or {}).get("name", "")) in used:
            continue  # read with the InferenceService that runs on it
        else:
            found += manifests.invocations_from_manifests([doc], path, lines)
    return found


def _a_config_with_typos(data: dict[str, Any]) -> bool:
    """A flat mapping (no nested structure) with a key close to a vLLM option: a config file, misspelt."""
    flat = all(not isinstance(v, (dict, list)) or isinstance(v, list) and all(not isinstance(i, (dict, list))
                                                                                 for i in v) for v in data.values())
    return flat and any(suggestions_any_version("--" + str(k).replace("_", "-")) for k in data)


def _searched_yaml(docs: list[YamlDoc], lines: list[str]) -> str:
    app = _ray_serve_application(lines)
    if app:
        return app
    first = docs[0].data
    keys = ", ".join(str(k) for k in list(first)[:6]) + (", ..." if len(first) > 6 else "") \
        if isinstance(first, dict) else ""
    unread = [f"{key} (line {line})" for doc in docs for key, line in unread_values(doc, [])]
    out = (f"its keys ({keys}) are not vLLM options, and " if keys else "") + \
        "no string, argument list or container in it runs vLLM"
    if unread:
        out += ("; " + ", ".join(unread[:8]) + " look like settings a Helm chart turns into flags, but "
                "vllm-reader does not know this chart's template: render it (helm template) and read the result")
    return out


def _ray_serve_application(lines: list[str]) -> str:
    """A Ray Serve application whose import_path names the user's own module (not ray.serve.llm's builders, which
    take llm_configs) builds its vLLM engine in Python: the engine arguments are in that code, not in this file."""
    for number, line in enumerate(lines, 1):
        found = re.match(r"\s*-?\s*import_path:\s*['\"]?([\w.:-]+)", line)
        if found and not found.group(1).startswith("ray.serve.llm"):
            return (f"its Ray Serve application (import_path {found.group(1)}, line {number}) builds the vLLM engine "
                    "in its own Python code, which vllm-reader does not run, so no file or tool here can say which "
                    "engine arguments that code passes: give them as the equivalent `vllm serve MODEL --option ...` "
                    "command (in a file, or as the config argument)")
    return ""


def _with_set_env(docs, set_vars):
    """--set values act like container env entries for Kubernetes' $(VAR) expansion."""
    if not set_vars:
        return docs
    for doc in docs:
        _inject_env(doc.data, set_vars)
    return docs


def _inject_env(node: Any, set_vars: dict[str, str]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("image"), str):
            env = node.setdefault("env", [])
            if isinstance(env, list):
                env.extend({"name": k, "value": v} for k, v in set_vars.items())
            return
        for value in node.values():
            _inject_env(value, set_vars)
    elif isinstance(node, list):
        for item in node:
            _inject_env(item, set_vars)
