"""vLLM-style argument parsing against one release's flag table.

Mirrors what `vllm serve` does with its arguments, as far as it changes which flag gets which
value: dashes and underscores are interchangeable in option names; `--flag=value`; unambiguous
prefixes (argparse's allow_abbrev); `--no-` negations; JSON-valued options and their dotted
sub-keys (`--compilation-config.mode 3`, `-cc.pass_config.x=true`); `-O3` shorthands per
release; human-readable integers (`32k`, `1M`); argparse choices.

Errors that vLLM's parser would raise for any release (an option no release knows, a value
that is not a number) are bad input (ReaderError). A flag this release lacks but another has,
and a value outside this release's choices, are kept and marked: they are findings for
`vllm-reader check`, which can say when the flag appeared or disappeared.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import ReaderError, did_you_mean
from ..versions import VersionTuple, format_version, known_versions
from .constraints import key_error_sentence, parse_human_int, violated_bound, violated_key_bounds, violated_key_type
from .dotted import DOTTED_SINCE, DottedKeys
from .flagtable import (FlagTable, OptionMatch, flag_table, history_prefix_matches, option_history,
                        suggestions_any_version)
from .kv_pairs import REMOVED_IN, falls_back_to_kv, is_kv_form, parse_kv_pairs
from .model import GivenFlag, Note, Placeholder, SyntaxRefusal
from .tokens import Token, placeholder_name

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


@dataclass
class ParsedArgs:
    flags: dict[str, GivenFlag] = field(default_factory=dict)
    positional_model: Optional[Token] = None
    notes: list[Note] = field(default_factory=list)
    placeholders: list[Placeholder] = field(default_factory=list)


class _SyntaxRefused(Exception):
    def __init__(self, refusal: SyntaxRefusal) -> None:
        super().__init__(refusal.form)
        self.refusal = refusal


class ArgParser:
    """Parses one token list at one release; construct per call."""

    def __init__(self, version: VersionTuple, source: str, accepts_positional_model: bool = True,
                 beyond_tables: Optional[str] = None) -> None:
        """`beyond_tables` names the user's release when it lies outside the flag tables: an option no
        table has is then kept unchecked (that release may have it) instead of refused."""
        self.table: FlagTable = flag_table(version)
        self.version = version
        self.source = source
        self.accepts_positional_model = accepts_positional_model
        self.beyond_tables = beyond_tables
        self.out = ParsedArgs()
        self.dotted = DottedKeys(version, parse_human_int)

    # ---- driver -------------------------------------------------------------------------
    def parse(self, tokens: list[Token]) -> ParsedArgs:
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok.text == "--":
                for rest in tokens[i + 1:]:
                    self._positional(rest)
                break
            if tok.is_placeholder_only and not tok.text.startswith("-"):
                if self.out.positional_model is None and self.accepts_positional_model:
                    self.out.positional_model = tok  # the model, named by an undefined variable
                    self.out.placeholders.append(Placeholder(text=tok.text, name=placeholder_name(tok.text),
                                                             flag="model", loc=tok.loc))
                else:
                    self._unexpanded(tok)
                i += 1
                continue
            if _is_option(tok):
                i = self._option(tokens, i)
            else:
                self._positional(tok)
                i += 1
        self._append_dotted()
        return self.out

    # ---- positionals --------------------------------------------------------------------
    def _positional(self, tok: Token) -> None:
        if self.out.positional_model is None and self.accepts_positional_model:
            self.out.positional_model = tok
            return
        raise ReaderError(
            f"unexpected argument '{tok.text}': vLLM {format_version(self.version)} would stop with "
            f"'unrecognized arguments: {tok.text}'.",
            file=self._file(tok), line=self._line(tok), key=tok.text)

    def _unexpanded(self, tok: Token) -> None:
        name = placeholder_name(tok.text)
        self.out.placeholders.append(Placeholder(text=tok.text, name=name, loc=tok.loc))
        self.out.notes.append(Note(
            level="warning", loc=tok.loc, key=tok.text,
            message=f"'{tok.text}' expands to arguments this file does not define; they are not read. "
                    f"Supply them with --set {name}=...",
        ))

    # ---- options ------------------------------------------------------------------------
    def _option(self, tokens: list[Token], i: int) -> int:
        tok = tokens[i]
        name, inline = _split_inline(tok.text)
        name = _dashes(name)
        shorthand = self._optimization_shorthand(name, inline)
        if shorthand is not None:
            name, inline = shorthand
        base, _, subkey = name.partition(".")
        matches = self.table.match(base)
        if len(matches) > 1 and option_history(base) is not None:
            # argparse at this release would call it ambiguous; it names a flag of other releases.
            return self._option_not_in_version(tokens, i, base, inline, subkey)
        if len(matches) > 1:
            raise ReaderError(
                f"'{base}' is ambiguous for vLLM {self.table.version_str}: it abbreviates "
                + ", ".join(m.canonical for m in matches) + ". Spell the option out.",
                file=self._file(tok), line=self._line(tok), key=tok.spelling or base)
        if not matches:
            return self._option_not_in_version(tokens, i, base, inline, subkey)
        match = matches[0]
        if match.via_prefix:
            self.out.notes.append(Note(
                level="info", loc=tok.loc, key=base,
                message=f"'{base}' is read as {match.canonical}: vLLM's argument parser accepts an unambiguous "
                        "prefix of an option name.",
            ))
        try:
            values, consumed = self._take_values(tokens, i, match.spec, inline, match.negated or bool(subkey))
        except _SyntaxRefused as refused:
            self._store_refused(tok, match, refused.refusal)
            return i + 1
        if subkey and self.version < DOTTED_SINCE:
            self._dotted_not_read(tok, match.canonical, match.spec, subkey, values)
        else:
            self._store(tok, match, values, subkey, in_version=True)
        return i + 1 + consumed

    def _dotted_not_read(self, tok: Token, canonical: str, spec: dict[str, Any], subkey: str,
                         values: list[Token]) -> None:
        """Before v0.9.2 argparse sees `--x.key` as an option it does not know ('unrecognized arguments')."""
        dest = f"{spec['dest']}.{subkey}"
        raw = values[0].text if values else None
        self.out.flags[dest] = GivenFlag(
            dest=dest, option=f"{canonical}.{subkey}", spelling=tok.spelling or _split_inline(tok.text)[0],
            loc=tok.loc, raw=raw, value=_json_or_text(raw) if raw is not None else True, in_version=False,
            versions_with_flag=f"{format_version(DOTTED_SINCE)} and later, as a sub-key of {canonical}")

    def _option_not_in_version(self, tokens: list[Token], i: int, base: str, inline: Optional[str],
                               subkey: str) -> int:
        tok = tokens[i]
        history = option_history(base)
        if history is None:
            prefixed = history_prefix_matches(base)
            canonicals = {h.canonical for h in prefixed}
            if len(canonicals) == 1:
                history = prefixed[0]
        if history is None and self.beyond_tables:
            return self._kept_unchecked(tokens, i, base, inline)
        if history is None:
            hint = suggestions_any_version(base) or self.table.suggestions(base)
            raise ReaderError(
                f"unknown vLLM option '{tok.spelling or base}': no vLLM release from "
                f"{format_version(known_versions()[0])} to {format_version(known_versions()[-1])} accepts it"
                + "." + did_you_mean(hint),
                file=self._file(tok), line=self._line(tok), key=tok.spelling or base)
        # Known elsewhere: read it with the nearest release that has it, and mark it.
        other = flag_table(history.nearest_version(self.version))
        spec = other.options[history.canonical]
        negated = base in spec.get("neg", [])
        match = OptionMatch(history.canonical, spec, negated)
        try:
            values, consumed = self._take_values(tokens, i, spec, inline, negated or bool(subkey))
        except _SyntaxRefused:  # the flag is not this release's anyway: its value is kept as written
            values, consumed = [Token(inline or "", tok.loc, tok.unresolved, tok.spelling, tok.typed_value)], 0
        self._store(tok, match, values, subkey, in_version=False, ranges=history.describe())
        return i + 1 + consumed

    def _kept_unchecked(self, tokens: list[Token], i: int, base: str, inline: Optional[str]) -> int:
        """An option no checked release has, for a release outside the tables: kept as written."""
        tok = tokens[i]
        value_tok = None if inline is not None or i + 1 >= len(tokens) or _is_option(tokens[i + 1]) else tokens[i + 1]
        raw = inline if inline is not None else (value_tok.text if value_tok is not None else None)
        dest = base.lstrip("-").replace("-", "_")
        self.out.flags[dest] = GivenFlag(dest=dest, option=base, spelling=tok.spelling or base, loc=tok.loc, raw=raw,
                                         value=_json_or_text(raw) if raw is not None else True)
        hint = suggestions_any_version(base)
        self.out.notes.append(Note(level="warning", loc=tok.loc, key=tok.spelling or base, message=(
            f"'{tok.spelling or base}' is in no release from {format_version(known_versions()[0])} to "
            f"{format_version(known_versions()[-1])}; vLLM {self.beyond_tables} may have it, so it is kept as "
            "written and not checked" + (f" (did you mean {' or '.join(hint)}?)" if hint else ""))))
        return i + 1 + (1 if value_tok is not None else 0)

    # ---- values -------------------------------------------------------------------------
    def _take_values(self, tokens: list[Token], i: int, spec: dict[str, Any], inline: Optional[str],
                     no_value: bool) -> tuple[list[Token], int]:
        """The value tokens of option tokens[i], and how many tokens after it they used."""
        tok = tokens[i]
        kind = _arity(spec)
        if inline is not None:
            if kind == "flag" and not no_value:
                raise _SyntaxRefused(_value_after_a_flag(spec, _split_inline(tok.text)[0], inline))
            return [Token(inline, tok.loc, tok.unresolved, tok.spelling, tok.typed_value)], 0
        if kind == "flag" or (no_value and kind != "many"):
            if no_value and kind != "flag" and i + 1 < len(tokens) and not _is_option(tokens[i + 1]):
                return [tokens[i + 1]], 1  # a dotted sub-key still takes its value
            return [], 0
        following = []
        for nxt in tokens[i + 1:]:
            if _is_option(nxt) or nxt.text == "--":
                break
            following.append(nxt)
            if kind in ("one", "optional"):
                break
        if kind == "one" and not following:
            raise ReaderError(
                f"{spec_name(spec, tok)} expects a value and none follows it (vLLM: 'expected one argument').",
                file=self._file(tok), line=self._line(tok), key=tok.spelling or tok.text)
        if kind == "many" and not following:
            raise ReaderError(
                f"{spec_name(spec, tok)} expects at least one value and none follows it.",
                file=self._file(tok), line=self._line(tok), key=tok.spelling or tok.text)
        return following, len(following)

    def _store_refused(self, tok: Token, match: OptionMatch, refusal: SyntaxRefusal) -> None:
        """A flag this release's parser stops on (vLLM would not start): kept with the refusal, no value read."""
        self.out.flags.pop(match.spec["dest"], None)
        self.out.flags[match.spec["dest"]] = GivenFlag(
            dest=match.spec["dest"], option=match.canonical, spelling=tok.spelling or _split_inline(tok.text)[0],
            loc=tok.loc, raw=refusal.written, in_version=True, refused_syntax=refusal)

    def _store(self, tok: Token, match: OptionMatch, values: list[Token], subkey: str,
               in_version: bool, ranges: Optional[str] = None) -> None:
        spec = match.spec
        dest = spec["dest"]
        spelling = tok.spelling or _split_inline(tok.text)[0]
        unresolved = [u for v in values for u in v.unresolved] + list(tok.unresolved)
        existing = self.out.flags.get(dest)
        given = GivenFlag(
            dest=dest, option=match.canonical, spelling=spelling, loc=tok.loc,
            raw=" ".join(v.text for v in values) if values else None,
            in_version=in_version, versions_with_flag=ranges, unresolved=unresolved,
        )
        if unresolved:
            for text in unresolved:
                self.out.placeholders.append(Placeholder(text=text, name=placeholder_name(text),
                                                         flag=match.canonical, loc=tok.loc))
            given.value = None
        elif subkey:
            self._check_json_option(spec, tok, subkey)
            self.dotted.add(_dotted_group(tok.text), tok, match.canonical, spec, subkey,
                            values[0].text if values else "true", in_version, ranges)
            return
        else:
            try:
                given.value = self._convert(spec, match, values, tok)
            except _SyntaxRefused as refused:
                given.refused_syntax = refused.refusal  # vLLM would not start: a finding (VR121), not bad input
                self.out.flags.pop(dest, None)
                self.out.flags[dest] = given
                return
            given.invalid_choice = self._check_choices(spec, given.value)
        if in_version and given.value is not None:
            self._check_value(spec, given, tok)
        if spec.get("action") == "append" and existing is not None and isinstance(existing.value, list):
            given.value = existing.value + (given.value if isinstance(given.value, list) else [given.value])
        if existing is not None and not subkey and spec.get("action") != "append":
            given.notes.append(f"given more than once; the last value wins (as in vLLM); earlier: {existing.raw}")
        self.out.flags.pop(dest, None)  # keep "order given" = position of the last occurrence
        self.out.flags[dest] = given

    def _convert(self, spec: dict[str, Any], match: OptionMatch, values: list[Token], tok: Token) -> Any:
        kind = _arity(spec)
        if kind == "flag":
            return not match.negated
        if kind == "optional" and not values:
            const = spec.get("const")
            return _convert_scalar(spec["type"], str(const) if const is not None else "True", spec)
        converted = [self._convert_one(spec, v, tok) for v in values]
        if kind == "many" or spec.get("action") == "append":
            return converted
        return converted[0]

    def _convert_one(self, spec: dict[str, Any], value: Token, tok: Token) -> Any:
        self._refuse_removed_syntax(spec, value.text)
        kv_fallback = falls_back_to_kv(spec, self.version) and is_kv_form(value.text)
        try:
            if kv_fallback:
                parsed = parse_kv_pairs(value.text)
                key = tok.spelling or spec_name(spec, tok)
                self.out.notes.append(Note(level="info", loc=tok.loc, key=key, message=(
                    f"'{value.text}' is read as {json.dumps(parsed)}: vLLM {format_version(self.version)} still "
                    f"accepts the deprecated KEY=VALUE form, which vLLM {format_version(REMOVED_IN)} removed")))
                return parsed
            if (spec.get("dest") == "compilation_config" and value.text.strip().isdigit()
                    and self.version >= BARE_LEVEL_REFUSED):
                raise _SyntaxRefused(SyntaxRefusal(
                    form="a bare optimization level", written=value.text.strip(),
                    removed_in=format_version(BARE_LEVEL_REFUSED), instead=f"-O{value.text.strip()}"))
            return _convert_scalar(spec["type"], value.text, spec, self.table.parsers.get("human_int"))
        except (ValueError, json.JSONDecodeError) as err:
            raise ReaderError(
                f"{spec_name(spec, tok)} got '{value.text}', which vLLM {self.table.version_str} cannot read as "
                f"{_type_words(spec['type'])}" + self._why_not(spec, value.text, err, kv_fallback),
                file=self._file(value) or self._file(tok), line=self._line(value) or self._line(tok),
                key=tok.spelling or spec_name(spec, tok)) from None

    def _refuse_removed_syntax(self, spec: dict[str, Any], text: str) -> None:
        """Well-formed KEY=VALUE pairs for a JSON option: read up to 0.9.2, refused from 0.10.0."""
        if spec["type"] != "json" or not is_kv_form(text) or self.version < REMOVED_IN:
            return
        try:
            instead = json.dumps(parse_kv_pairs(text))
        except ValueError:
            return  # not even pairs an earlier release read: bad input, said by the caller
        raise _SyntaxRefused(SyntaxRefusal(form="the KEY=VALUE form", written=text,
                                           removed_in=format_version(REMOVED_IN), instead=instead))

    def _why_not(self, spec: dict[str, Any], text: str, err: Exception, kv_tried: bool) -> str:
        if str(err).startswith("decimals"):  # the release's human-readable integers refuse '1.5K'
            return f": {err}."
        if kv_tried or spec["type"] == "kv_pairs":
            return f" ({err})."
        return "."

    def _check_json_option(self, spec: dict[str, Any], tok: Token, subkey: str) -> None:
        if spec["type"] not in ("json", "json_or_str", "custom:from_json"):
            raise ReaderError(f"{spec_name(spec, tok)} is not a JSON option, so '.{subkey}' sub-keys do not apply.",
                              file=self._file(tok), line=self._line(tok), key=tok.spelling or tok.text)

    def _append_dotted(self) -> None:
        """The merged sub-keys become the option's last value, as vLLM appends them (see reader/config/dotted.py)."""
        for entry in self.dotted.merged():
            dest = entry.spec["dest"]
            earlier = self.out.flags.pop(dest, None)
            given = GivenFlag(dest=dest, option=entry.canonical, spelling=", ".join(dict.fromkeys(entry.spellings)),
                              loc=entry.first.loc, raw=json.dumps(entry.value), value=entry.value,
                              in_version=entry.in_version, versions_with_flag=entry.ranges)
            if entry.overwritten:
                given.notes.append("sub-key given more than once; the last value wins (as in vLLM): "
                                   + ", ".join(entry.overwritten))
            if entry.in_version:
                self._check_value(entry.spec, given, entry.first)
            if earlier is not None and earlier.value is not None:
                self.out.notes.append(Note(level="warning", loc=earlier.loc, key=earlier.spelling, message=(
                    f"{earlier.spelling} {earlier.raw} is lost: vLLM gathers the dotted sub-keys {given.spelling} "
                    f"into one more {entry.name} {given.raw} after all other arguments, and the last value of "
                    f"{entry.canonical} wins. Give every key in one form under one spelling")))
            self.out.flags[dest] = given

    def _check_value(self, spec: dict[str, Any], given: GivenFlag, tok: Token) -> None:
        """The release's constraints on the value: a JSON key argparse refuses is bad input here too; one the engine
        config refuses at start-up, and a number out of bounds, are kept for `check` to report."""
        wrong = violated_key_type(spec, given.value)
        if wrong is not None and wrong.stage == "parse":
            raise ReaderError(key_error_sentence(wrong, given.option, format_version(self.version)),
                              file=self._file(tok), line=self._line(tok), key=wrong.name)
        given.key_error = wrong
        given.out_of_bounds = violated_bound(spec, given.value) or violated_key_bounds(spec, given.value)

    def _check_choices(self, spec: dict[str, Any], value: Any) -> Optional[list[Any]]:
        choices = spec.get("choices")
        if not choices or value is None:
            return None
        items = value if isinstance(value, list) else [value]
        ok = all(item in choices or str(item) in [str(c) for c in choices] for item in items)
        return None if ok else list(choices)

    # ---- -O shorthands ------------------------------------------------------------------
    def _optimization_shorthand(self, name: str, inline: Optional[str]) -> Optional[tuple[str, Optional[str]]]:
        """`-O3`, `-O=3`: rewritten per release as vLLM's FlexibleArgumentParser does."""
        m = re.fullmatch(r"-O(\d)", name)
        level = m.group(1) if m else (inline if name == "-O" and inline is not None else None)
        if level is None:
            return None
        v = self.version
        if v >= (0, 12, 0):
            return "--optimization-level", level
        if v >= (0, 11, 2):
            return "--compilation-config.mode", level
        if v >= (0, 9, 2):
            return "--compilation-config.level", level
        return "--compilation-config", level

    @staticmethod
    def _file(tok: Token) -> Optional[str]:
        return tok.loc.file if tok.loc else None

    @staticmethod
    def _line(tok: Token) -> Optional[int]:
        return tok.loc.line if tok.loc else None


# ---- helpers ----------------------------------------------------------------------------------

def _split_inline(text: str) -> tuple[str, Optional[str]]:
    if "=" in text:
        name, value = text.split("=", 1)
        return name, value
    return text, None


def _dotted_group(text: str) -> str:
    """The name vLLM groups a dotted sub-key under: the spelling before the first '.', dashes normalised;
    `-O3` (read as `-O.level=3` from v0.9.2 to v0.11.x) belongs to `-O`."""
    name = _dashes(_split_inline(text)[0])
    return "-O" if re.fullmatch(r"-O\d", name) else name.partition(".")[0]


def _dashes(name: str) -> str:
    """`--max_num_seqs` -> `--max-num-seqs`; the part after the first '.' is left alone (as vLLM does)."""
    if not name.startswith("--"):
        return name
    head, dot, tail = name.partition(".")
    return "--" + head[2:].replace("_", "-") + dot + tail


def _is_option(tok: Token) -> bool:
    return tok.text.startswith("-") and tok.text != "-" and not _NEGATIVE_NUMBER.match(tok.text)


def _value_after_a_flag(spec: dict[str, Any], option: str, value: str) -> SyntaxRefusal:
    """`--enable-chunked-prefill=false` where the flag takes no value: argparse stops ("ignored explicit argument
    'false'", Python's argparse for store_true and BooleanOptionalAction); releases that read a value there took
    it as a boolean (vLLM's StoreBoolean / nargs='?' options up to 0.6.x)."""
    negatives = spec.get("neg") or []
    off = value.strip().lower() in ("false", "0", "no", "off")
    instead = (negatives[0] if negatives else "no flag at all") if off else option
    return SyntaxRefusal(form="a value after a flag that takes none", written=value, removed_in="", instead=instead)


def _arity(spec: dict[str, Any]) -> str:
    if spec.get("action") in ("store_true", "BooleanOptionalAction") or (
            spec["type"] == "bool" and spec.get("action") not in ("StoreBoolean",) and spec.get("nargs") is None):
        return "flag"
    nargs = spec.get("nargs")
    if nargs == "+" or nargs == "*":
        return "many"
    if nargs == "?":
        return "optional"
    return "one"


def spec_name(spec: dict[str, Any], tok: Token) -> str:
    return f"'{tok.spelling}'" if tok.spelling else f"--{spec['dest'].replace('_', '-')}"


def _type_words(kind: str) -> str:
    return {"int": "an integer", "float": "a number", "human_int": "an integer (suffixes k, K, m, M, g, G allowed)",
            "human_int_or_auto": "an integer, -1 or 'auto'", "json": "JSON", "bool_str": "true or false",
            "kv_pairs": "KEY=VALUE pairs (image=2,video=1)"}.get(kind, kind)


# A bare number for --compilation-config: CompilationConfig.from_cli read it as the level up to 0.8.5
# (`cls(level=int(cli_value))`, vllm/config.py @ v0.8.5) and validates the value as a JSON object from 0.9.2
# (TypeAdapter(CompilationConfig).validate_json, vllm/config.py @ v0.9.2; 0.9.0 and 0.9.1 not read, so not refused):
# vLLM 0.32.0 and 0.18.0 refuse '--compilation-config 3' while parsing ("Input should be an object", found by
# tools/differential/corpus.py on fixtures/corpus/prodstack_gie_gpu-deployment.yaml)
BARE_LEVEL_REFUSED = (0, 9, 2)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _convert_scalar(kind: str, text: str, spec: dict[str, Any], human_int: Optional[dict[str, Any]] = None) -> Any:
    if spec.get("nullable") and text in ("", "None"):
        return None
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "human_int":
        return parse_human_int(text, human_int)
    if kind == "kv_pairs":
        return parse_kv_pairs(text)
    if kind == "human_int_or_auto":
        return -1 if text.strip().lower() in ("auto", "-1") else parse_human_int(text, human_int)
    if kind == "bool_str":
        low = text.strip().lower()
        if low not in ("true", "false"):
            raise ValueError("expected true or false")
        return low == "true"
    if kind in ("json", "custom:from_json"):
        if spec.get("dest") == "compilation_config" and text.strip().isdigit():
            return int(text)  # a bare optimisation level, accepted by CompilationConfig.from_cli up to 0.8.5
        value = json.loads(text)
        return value
    if kind == "json_or_str":
        return _json_or_text(text)
    if kind.startswith("str(lowercased"):
        return text.lower().replace("-", "_")
    return text
