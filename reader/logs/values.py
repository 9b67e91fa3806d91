"""The key/value text vLLM logs: its engine config line (`model='x', dtype=torch.bfloat16, ...`), an
argparse Namespace (`Namespace(model='x', max_num_seqs=256, ...)`) and its non-default args (a
Python dict repr). Read without evaluating code: literals through `ast.literal_eval` (which builds
only strings, numbers, tuples, lists, dicts, booleans and None), anything else kept as text.

A body cut short (a truncated paste) loses only its unfinished last item; the reader says so.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

_ENUM_MEMBER = re.compile(r"^[A-Z]\w*\.([A-Za-z_]\w*)$")  # LoadFormat.AUTO, torch.bfloat16 handled apart
_ANGLE_ENUM = re.compile(r"^<[\w.]+: '?([^'>]*)'?>$")  # <CompilationMode.NONE: 0>
_KEY = re.compile(r"^\s*([A-Za-z_]\w*)\s*$")


@dataclass
class KeyValues:
    values: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False  # the text ended inside an item (a cut paste)
    dropped: str = ""  # the unfinished tail, for the report


def parse_assignments(body: str, closer: str = "") -> KeyValues:
    """`a=1, b='x', c=Cls(d=2)` -> {'a': 1, 'b': 'x', 'c': 'Cls(d=2)'}.

    closer: the character that ends the whole text when it is complete (')' for a Namespace). Without one
    (the engine config line) a last item that is not a closed bracket may be a cut value ('max_seq_len=81'
    of 8192), so it is not trusted either."""
    text = body.strip()
    ended = bool(closer) and text.endswith(closer) and _split_top(text)[2] < 0
    items, complete, _ = _split_top(text[:-1] if ended else text)
    out = KeyValues()
    for i, item in enumerate(items):
        key, sep, value = item.partition("=")
        last = i == len(items) - 1
        sure = not last or (complete and (ended or value.strip()[-1:] in ")]}"))
        if not sep or not _KEY.match(key) or not sure:
            if last:
                out.truncated, out.dropped = True, item.strip()
            continue
        out.values[key.strip()] = read_value(value.strip())
    return out


def parse_mapping(body: str) -> KeyValues:
    """`{'a': 1, 'b': KVTransferConfig(x=1)}` -> {'a': 1, 'b': 'KVTransferConfig(x=1)'}."""
    text = body.strip()
    if text.startswith("{"):
        text = text[1:]
    closed = text.rstrip().endswith("}")
    if closed:
        text = text.rstrip()[:-1]
    items, complete, _ = _split_top(text)
    out = KeyValues()
    for i, item in enumerate(items):
        key, sep, value = _partition_colon(item)
        last = i == len(items) - 1
        if not sep or (last and not (complete and closed)):
            if last:
                out.truncated, out.dropped = True, item.strip()
            continue
        name = read_value(key.strip())
        if isinstance(name, str):
            out.values[name] = read_value(value.strip())
    if not closed and not out.truncated:
        out.truncated = True
    return out


def read_value(text: str) -> Any:
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text.startswith("torch."):
        return text[len("torch."):]  # dtype=torch.bfloat16
    angle = _ANGLE_ENUM.match(text)
    if angle:
        return angle.group(1)
    member = _ENUM_MEMBER.match(text)
    if member and "(" not in text:
        return member.group(1).lower()  # LoadFormat.AUTO -> auto
    if text[:1] in "[{(\"'" or text[:1].isdigit() or text[:1] == "-":
        for reader in (_literal, _json):
            try:
                return reader(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return text


def _literal(text: str) -> Any:
    if len(text) > 20000:
        raise ValueError("too long to read as a literal")
    return ast.literal_eval(text)


def _json(text: str) -> Any:
    return json.loads(text)


def _split_top(text: str) -> tuple[list[str], bool, int]:
    """Split at commas outside brackets and quotes; complete is False when the text ends inside one; depth is
    the bracket depth at the end (below 0: the text closes a bracket it did not open)."""
    items: list[str] = []
    depth, quote, start, escaped = 0, None, 0, False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "<" and text[i + 1:i + 2].isalpha():
            depth += 1
        elif ch == ">" and depth > 0 and text[i - 1:i] != "-":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    tail = text[start:]
    if tail.strip():
        items.append(tail)
    return items, quote is None and depth <= 0, depth


def _partition_colon(item: str) -> tuple[str, str, str]:
    """Split `'key': value` at the first colon outside quotes."""
    quote = None
    for i, ch in enumerate(item):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ":":
            return item[:i], ":", item[i + 1:]
    return item, "", ""
