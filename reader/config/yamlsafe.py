"""Safe YAML: plain data only, with limits, and the line of every key.

Configs come from strangers' repositories. We load with PyYAML's safe constructor (no object
construction), refuse tags outside YAML's core schema, cap file size, document count, node count
and alias expansion (an "alias bomb" expands a few lines into billions of nodes), and keep a map
from each value's path to its line so errors and findings can point at the key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

import yaml

from ..errors import ReaderError

MAX_BYTES = 5 * 1024 * 1024
MAX_DOCUMENTS = 200
MAX_NODE_VISITS = 200_000
MAX_ALIASES = 1_000

_CORE_TAGS = {
    "tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "merge",
                                       "binary", "omap", "pairs", "set", "value")
}

Path = tuple[Any, ...]


@dataclass
class YamlDoc:
    data: Any
    lines: dict[Path, int] = field(default_factory=dict)  # path of a key or item -> 1-based line

    def line(self, path: Path) -> Optional[int]:
        """Line of the path, or of its nearest ancestor that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get(())


def _loader_class() -> type:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# `key: {{HF_TOKEN}}`: a documentation template's slot, filled by hand or by sed before `kubectl apply`. Unquoted,
# YAML reads it as a flow mapping with a mapping for its key and refuses the whole file (every document).
_TEMPLATE_SLOT_VALUE = re.compile(r"^(\s*(?:-\s+)?[^\s#'\"{][^#\n]*?:[ \t]+)(\{\{[^{}\n]*\}\})[ \t]*$", re.M)


def load_yaml_documents(text: str, file: Optional[str]) -> list[YamlDoc]:
    if len(text.encode("utf-8", errors="replace")) > MAX_BYTES:
        raise ReaderError(f"the file is larger than {MAX_BYTES // 2**20} MiB; vllm-reader refuses to read it.",
                          file=file)
    try:
        return _load_documents(text, file)
    except ReaderError:
        slotted = _TEMPLATE_SLOT_VALUE.sub(r"\1'\2'", text)
        if slotted == text:
            raise
        try:
            return _load_documents(slotted, file)
        except ReaderError:
            pass
        raise


def _load_documents(text: str, file: Optional[str]) -> list[YamlDoc]:
    loader = _loader_class()(text)
    docs: list[YamlDoc] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if len(docs) >= MAX_DOCUMENTS:
                raise ReaderError(f"more than {MAX_DOCUMENTS} YAML documents in one file.", file=file)
            _check_limits(node, file)
            data = loader.construct_document(node)
            lines: dict[Path, int] = {}
            _collect_lines(node, (), lines)
            docs.append(YamlDoc(data, lines))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else None
        problem = (err.problem or err.context or "malformed YAML").strip()
        if "could not determine a constructor" in problem:
            problem = "a YAML tag that is not plain data (" + problem.split("tag")[-1].strip(" '!") + ")"
        raise ReaderError(f"malformed YAML: {problem}.", file=file, line=line) from None
    except yaml.YAMLError as err:
        raise ReaderError(f"malformed YAML: {err}.", file=file) from None
    finally:
        loader.dispose()
    return docs


def _check_limits(root: yaml.Node, file: Optional[str]) -> None:
    """Walk the node graph as construction would, counting visits and aliases; stop early if it explodes."""
    visits = 0
    aliases = 0
    seen_ids: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        visits += 1
        if visits > MAX_NODE_VISITS:
            raise ReaderError(
                "the YAML expands to more than 200,000 nodes (an alias bomb?); vllm-reader refuses to read it.",
                file=file, line=node.start_mark.line + 1)
        if id(node) in seen_ids:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise ReaderError("the YAML uses more than 1,000 aliases; vllm-reader refuses to read it.",
                                  file=file, line=node.start_mark.line + 1)
        seen_ids.add(id(node))
        if node.tag not in _CORE_TAGS and not node.tag.startswith("tag:yaml.org,2002:"):
            raise ReaderError(f"YAML tag '{node.tag}' is not plain data; only standard YAML types are read.",
                              file=file, line=node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _collect_lines(node: yaml.Node, path: Path, lines: dict[Path, int], depth: int = 0) -> None:
    if depth > 64:
        return
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                child = path + (key.value,)
                lines[child] = key.start_mark.line + 1
                _collect_lines(value, child, lines, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            _collect_lines(item, path + (i,), lines, depth + 1)
