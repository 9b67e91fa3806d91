"""Just enough of a shell to read the vLLM command out of a script.

Scripts, Dockerfiles' shell strings, Kubernetes `bash -c` args and SkyPilot `run:` blocks all
hold a command line with continuations, quotes, comments, variable assignments and expansions.
We lex words with the line each starts on, keep assignments (`X=1`, `export X=1`, `X=1 cmd`),
and expand `$X`, POSIX's `${X...}` forms (`:-` `-` `:=` `=` `:+` `+` `:?` `?` `#` `##` `%` `%%`, `${#X}`),
`$((a*b))` and Kubernetes' `$(X)` from what the script (or `--set`) defines. Anything we cannot expand
stays visible as a placeholder, never guessed; only `${X:+...}` of an undefined X reads as empty, as the shell
would with X unset, and is said. Nothing is executed.
"""
from __future__ import annotations

import re
from fnmatch import fnmatchcase
from dataclasses import dataclass, field
from typing import Optional

from ..errors import ReaderError
from .model import SourceLoc
from .tokens import Token

_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


@dataclass
class Segment:
    text: str
    quote: str = ""  # "", "'", '"'


@dataclass
class Word:
    segments: list[Segment]
    line: int

    @property
    def literal(self) -> str:
        return "".join(s.text for s in self.segments)


@dataclass
class Heredoc:
    """The body of a `<<DELIM` here-document: data the command reads on stdin, written out verbatim here."""

    body: str
    line: int  # line of the body's first line
    quoted: bool  # `<<'EOF'`: the shell expands nothing in the body


@dataclass
class Command:
    words: list[Word]
    line: int
    heredocs: list[Heredoc] = field(default_factory=list)


@dataclass
class ShellCommand:
    """A command after expansion: its words as tokens, and the environment it runs with."""

    tokens: list[Token]
    env: dict[str, str]
    line: int
    heredocs: list[Heredoc] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)  # the shell's variables, for a command with heredocs
    writes: list[str] = field(default_factory=list)  # files its `>` / `>>` redirections write
    dropped: list[str] = field(default_factory=list)  # `${X:+...}` of variables the file does not define


@dataclass
class Lexer:
    text: str
    powershell: bool = False
    file: Optional[str] = None  # for messages
    pos: int = 0
    line: int = 1
    commands: list[Command] = field(default_factory=list)

    def run(self) -> list[Command]:
        words: list[Word] = []
        pending: list[tuple[str, bool, bool]] = []  # here-documents opened on this line: (delimiter, -, quoted)
        heredocs: list[Heredoc] = []
        start_line = self.line
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if self._continuation():
                continue
            if ch in " \t\r":
                self.pos += 1
            elif ch == "#" and self._word_boundary():
                self._skip_comment()
            elif self.text.startswith("<<", self.pos) and not self.text.startswith("<<<", self.pos):
                pending.append(self._heredoc_operator())
            elif ch == "\n" or self._separator():
                if ch == "\n":
                    self.pos += 1
                    self.line += 1
                    heredocs += [self._heredoc_body(*p) for p in pending]
                    pending = []
                if words:
                    self.commands.append(Command(words, start_line, heredocs))
                    heredocs = []
                words = []
                start_line = self.line
            else:
                if not words:
                    start_line = self.line
                words.append(self._word())
        if words:
            self.commands.append(Command(words, start_line, heredocs))
        return self.commands

    def _heredoc_operator(self) -> tuple[str, bool, bool]:
        """`<<EOF`, `<<-EOF`, `<< 'EOF'`, `<<"EOF"`: the delimiter, whether tabs are stripped, whether quoted."""
        self.pos += 2
        strip_tabs = self.text.startswith("-", self.pos)
        self.pos += 1 if strip_tabs else 0
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        word = self._word()
        return word.literal, strip_tabs, any(seg.quote for seg in word.segments)

    def _heredoc_body(self, delimiter: str, strip_tabs: bool, quoted: bool) -> Heredoc:
        first_line = self.line
        lines: list[str] = []
        while self.pos < len(self.text):
            end = self.text.find("\n", self.pos)
            end = len(self.text) if end < 0 else end
            raw = self.text[self.pos:end]
            self.pos = min(end + 1, len(self.text))
            self.line += 1
            text = raw.lstrip("\t") if strip_tabs else raw
            if text.rstrip("\r") == delimiter:
                break
            lines.append(text)
        return Heredoc("\n".join(lines) + "\n", first_line, quoted)

    def _continuation(self) -> bool:
        escape = "`" if self.powershell else "\\"
        if self.text.startswith(escape + "\n", self.pos) or self.text.startswith(escape + "\r\n", self.pos):
            self.pos += 2 if self.text[self.pos + 1] == "\n" else 3
            self.line += 1
            return True
        if self.text[self.pos:].rstrip("\r") == escape:
            # a continuation into the end of the script: bash drops it and runs the command as it stands
            self.pos = len(self.text)
            return True
        return False

    def _fail(self, message: str, line: Optional[int] = None, fix: str = "Close the quote") -> None:
        raise ReaderError(f"cannot read the command line: {message}.", file=self.file, line=line or self.line,
                          hint=f"{fix}; vLLM would never get these arguments, because the shell refuses the line.")

    def _word_boundary(self) -> bool:
        return self.pos == 0 or self.text[self.pos - 1] in " \t\n;&|("

    def _skip_comment(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end

    def _separator(self) -> bool:
        if self.text.startswith("&>", self.pos):
            return False  # `&>file` redirects; it does not end the command
        for sep in ("&&", "||", ";", "|", "&"):
            if self.text.startswith(sep, self.pos):
                self.pos += len(sep)
                return True
        return False

    def _word(self) -> Word:
        segments: list[Segment] = []
        line = self.line
        buf: list[str] = []

        def flush(quote: str = "") -> None:
            if buf or quote:
                segments.append(Segment("".join(buf), quote))
                buf.clear()

        while self.pos < len(self.text):
            if self._continuation():
                continue
            ch = self.text[self.pos]
            if ch == "&" and (self.text.startswith("&>", self.pos) or (buf and buf[-1] in "<>")):
                buf.append(ch)  # `2>&1`, `&>log`: part of a redirection word
                self.pos += 1
                continue
            if ch in " \t\r\n;&|":
                break
            if ch == "'":
                flush()
                end = self.text.find("'", self.pos + 1)
                if end < 0:
                    self._fail("a single quote (') is opened here and never closed")
                chunk = self.text[self.pos + 1:end]
                self.line += chunk.count("\n")
                segments.append(Segment(chunk, "'"))
                self.pos = end + 1
            elif ch == '"':
                flush()
                segments.append(Segment(self._double_quoted(), '"'))
            elif ch == "\\" and not self.powershell and self.pos + 1 < len(self.text):
                buf.append(self.text[self.pos + 1])
                self.pos += 2
            elif ch == "$" and self.text.startswith("$(", self.pos):
                buf.append(self._balanced("(", ")"))
            elif self.text.startswith("${", self.pos):
                buf.append(self._parameter())
            elif ch == "`" and not self.powershell:
                end = self.text.find("`", self.pos + 1)
                end = len(self.text) if end < 0 else end
                buf.append(self.text[self.pos:end + 1])
                self.pos = end + 1
            else:
                buf.append(ch)
                self.pos += 1
        flush()
        return Word(segments, line)

    def _double_quoted(self) -> str:
        start_line = self.line
        self.pos += 1
        out: list[str] = []
        escape = "`" if self.powershell else "\\"
        while self.pos < len(self.text) and self.text[self.pos] != '"':
            ch = self.text[self.pos]
            if ch == escape and self.pos + 1 < len(self.text):
                nxt = self.text[self.pos + 1]
                if nxt == "\n":
                    self.line += 1
                elif nxt in '"$`\\':
                    out.append(nxt)
                else:
                    out.append(ch + nxt)
                self.pos += 2
                continue
            if ch == "$" and self.text.startswith("$(", self.pos):
                out.append(self._balanced("(", ")"))
                continue
            if self.text.startswith("${", self.pos):
                out.append(self._parameter())
                continue
            if ch == "\n":
                self.line += 1
            out.append(ch)
            self.pos += 1
        if self.pos >= len(self.text):
            self._fail('a double quote (") is opened here and never closed', start_line)
        self.pos += 1
        return "".join(out)

    def _parameter(self) -> str:
        """`${...}` verbatim: its operand may hold spaces, quotes and other expansions (`${R:+--revision "$R"}`)."""
        end = parameter_end(self.text, self.pos)
        if end is None:
            self._fail("a parameter expansion '${' is opened here and never closed", fix="Close the expansion with '}'")
        chunk = self.text[self.pos:end]
        self.line += chunk.count("\n")
        self.pos = end
        return chunk

    def _balanced(self, open_ch: str, close_ch: str) -> str:
        """`$( ... )` with nesting, returned verbatim."""
        start = self.pos
        depth = 0
        self.pos += 1  # the '$'
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == open_ch:
                depth += 1
            elif ch == close_ch:
                depth -= 1
                if depth == 0:
                    self.pos += 1
                    break
            elif ch == "\n":
                self.line += 1
            self.pos += 1
        return self.text[start:self.pos]


# ---- expansion -------------------------------------------------------------------------------

def parameter_end(text: str, start: int) -> Optional[int]:
    """The index just past the `}` that closes the `${` at `start`, minding nesting, quotes and escapes."""
    depth, pos, quote = 0, start, ""
    while pos < len(text):
        ch = text[pos]
        if ch == "\\" and quote != "'":
            pos += 2
            continue
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif text.startswith("${", pos):
            depth += 1
            pos += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    return None


_VAR = re.compile(
    r"\$\(\((?P<arith>.*?)\)\)"
    r"|\$env:(?P<psenv>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\$\((?P<k8s>[A-Za-z_][A-Za-z0-9_]*)\)"
    r"|\$(?P<bare>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\$\((?P<cmd>[^)]*)\)|`(?P<tick>[^`]*)`",
    re.S,
)
_EXPANSION_START = re.compile(r"[$`]")
# ${NAME}, ${#NAME} and POSIX's operators; bash's own (${X/a/b}, ${X:0:2}) do not match and stay placeholders.
_PARAMETER = re.compile(r"(?P<length>#)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:[-=+?]|[-=+?]|##|#|%%|%)?(?P<word>.*)",
                        re.S)
_OPERAND_PART = re.compile(r"'(?P<single>[^']*)'|\"(?P<double>(?:\\.|[^\"\\])*)\"|(?P<plain>(?:\\.|[^'\"\\])+)", re.S)


class Expander:
    """Expands variables from a known environment; records what it could not expand.

    A variable the file does not define is unknown, not empty: `$X` and `${X}` stay placeholders. Where the shell's
    operators say what an unset variable gives, that is used: a default (`${X:-d}`) is listed in `assumed_unset`, so
    that a word it leaves empty stays visible as an unknown value; an alternative that adds options only when X is
    set (`${X:+--revision "$X"}`) is dropped and listed in `dropped`, for a note; one that is a value
    (`--revision ${X:+$X}`) is a value unknown, as a default is.
    """

    def __init__(self, variables: dict[str, str]) -> None:
        self.variables = dict(variables)
        self.assumed_unset: list[str] = []
        self.dropped: list[str] = []

    def expand_text(self, text: str) -> tuple[str, list[str]]:
        out: list[str] = []
        unresolved: list[str] = []
        pos = 0
        for start in _EXPANSION_START.finditer(text):
            if start.start() < pos:
                continue
            whole, value = self._expansion_at(text, start.start())
            if whole is None:
                continue
            if value is None:
                unresolved.append(whole)
            out += [text[pos:start.start()], whole if value is None else value]
            pos = start.start() + len(whole)
        out.append(text[pos:])
        return "".join(out), unresolved

    def _expansion_at(self, text: str, at: int) -> tuple[Optional[str], Optional[str]]:
        """The expansion written at `at` and its value (None: unknown); (None, None) when `$` is a plain dollar."""
        if text.startswith("${", at):
            end = parameter_end(text, at)
            if end is not None:
                return text[at:end], self._parameter(text[at + 2:end - 1])
        m = _VAR.match(text, at)
        return (m.group(0), self._lookup(m)) if m else (None, None)

    def _lookup(self, m: re.Match[str]) -> Optional[str]:
        if m.group("arith") is not None:
            return self._arithmetic(m.group("arith"))
        name = m.group("psenv") or m.group("k8s") or m.group("bare")
        if name:
            return self.variables.get(name)
        return None  # command substitution: never run

    def _parameter(self, inner: str) -> Optional[str]:
        """`${...}` as a POSIX shell reads it, with the variables known."""
        m = _PARAMETER.fullmatch(inner)
        if m is None:
            return None
        name, op, word = m.group("name"), m.group("op") or "", m.group("word")
        value = self.variables.get(name)
        if m.group("length"):
            return None if op or word or value is None else str(len(value))
        if not op:
            return None if word else value
        if op in ("#", "##", "%", "%%"):
            pattern = self._operand(word)
            return None if value is None or pattern is None else _trim(value, op, pattern)
        is_set = bool(value) if op.startswith(":") else value is not None
        if op.endswith("?"):
            return value if is_set else None  # the shell would stop here when unset: unknown, not guessed
        if op.endswith("+"):
            if value is None and word.lstrip("'\"").startswith("-"):
                self.dropped.append("${" + inner + "}")  # options added only when set: none, as unset
            elif value is None:
                self.assumed_unset.append(name)  # a value: left empty, it is a value unknown
            return self._operand(word) if is_set else ""
        if value is None:
            self.assumed_unset.append(name)
        if is_set:
            return value
        operand = self._operand(word)
        if operand is not None and op.endswith("="):
            self.variables[name] = operand
        return operand

    def _operand(self, word: str) -> Optional[str]:
        """The word after an operator, with its quotes removed and its own expansions done."""
        parts: list[str] = []
        for m in _OPERAND_PART.finditer(word):
            if m.group("single") is not None:
                parts.append(m.group("single"))
                continue
            text = m.group("double") if m.group("double") is not None else m.group("plain")
            expanded, missing = self.expand_text(re.sub(r"\\(.)", r"\1", text))
            if missing:
                return None
            parts.append(expanded)
        return "".join(parts)

    def _arithmetic(self, expr: str) -> Optional[str]:
        """Integer + - * / % and parentheses over known variables; no eval."""
        def var(m: re.Match[str]) -> str:
            value = self.variables.get(m.group(1) or m.group(2) or m.group(3))
            if value is None or not re.fullmatch(r"\s*-?\d+\s*", value):
                raise KeyError(m.group(0))
            return value.strip()
        expr, missing = self.expand_text(expr)  # ${X:-0} and $X first, with their defaults
        if missing:
            return None
        try:
            text = re.sub(r"\$\{([A-Za-z_]\w*)[^}]*\}|\$([A-Za-z_]\w*)|\b([A-Za-z_]\w*)\b", var, expr)
            return str(_ArithParser(text).parse())
        except (KeyError, ValueError, ZeroDivisionError):
            return None

    def expand_word(self, word: Word, file: Optional[str]) -> list[Token]:
        """A word becomes one token, or several when an unquoted expansion splits on spaces."""
        pieces: list[tuple[str, bool]] = []  # (text, splittable)
        unresolved: list[str] = []
        assumed = len(self.assumed_unset)
        for seg in word.segments:
            if seg.quote == "'":
                pieces.append((seg.text, False))
                continue
            expanded, missing = self.expand_text(seg.text)
            unresolved += missing
            pieces.append((expanded, seg.quote == "" and expanded != seg.text))
        loc = SourceLoc(file=file, line=word.line)
        if not any(split for _, split in pieces):
            return [Token("".join(text for text, _ in pieces), loc, tuple(unresolved))]
        words: list[str] = [""]
        for text, split in pieces:
            if not split:
                words[-1] += text
                continue
            parts = re.split(r"[ \t\n]+", text)
            words[-1] += parts[0]
            words.extend(parts[1:])
        tokens = [Token(w, loc, tuple(u for u in unresolved if u in w)) for w in words if w != ""]
        if not tokens and len(self.assumed_unset) > assumed:
            # Empty only because a variable the file does not define was taken as unset: at run time it may be
            # set, so the word stays, as an unknown value (`--api-key ${KEY:-}`) or unread arguments.
            return [Token(word.literal, loc, (word.literal,))]
        return tokens


def _trim(value: str, op: str, pattern: str) -> str:
    """`#`/`##` remove the shortest/longest prefix matching the pattern, `%`/`%%` the shortest/longest suffix."""
    cuts = list(range(len(value) + 1))
    if op.startswith("#"):
        for i in (cuts if op == "#" else reversed(cuts)):
            if fnmatchcase(value[:i], pattern):
                return value[i:]
        return value
    for i in (reversed(cuts) if op == "%" else cuts):
        if fnmatchcase(value[i:], pattern):
            return value[:i]
    return value


class _ArithParser:
    """A tiny recursive-descent parser for shell integer arithmetic."""

    def __init__(self, text: str) -> None:
        self.tokens = re.findall(r"\d+|[-+*/%()]", text)
        if "".join(self.tokens) != re.sub(r"\s+", "", text):
            raise ValueError("unsupported arithmetic")
        self.i = 0

    def parse(self) -> int:
        value = self._sum()
        if self.i != len(self.tokens):
            raise ValueError("trailing tokens")
        return value

    def _peek(self) -> Optional[str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _sum(self) -> int:
        value = self._product()
        while self._peek() in ("+", "-"):
            op = self.tokens[self.i]
            self.i += 1
            value = value + self._product() if op == "+" else value - self._product()
        return value

    def _product(self) -> int:
        value = self._unary()
        while self._peek() in ("*", "/", "%"):
            op = self.tokens[self.i]
            self.i += 1
            rhs = self._unary()
            value = value * rhs if op == "*" else (int(value / rhs) if op == "/" else value % rhs)
        return value

    def _unary(self) -> int:
        tok = self._peek()
        if tok == "-":
            self.i += 1
            return -self._unary()
        if tok == "(":
            self.i += 1
            value = self._sum()
            self.i += 1
            return value
        if tok is None or not tok.isdigit():
            raise ValueError("expected a number")
        self.i += 1
        return int(tok)


def run_script(text: str, file: Optional[str], variables: dict[str, str], powershell: bool = False,
               env_file_lines: Optional[list[tuple[str, int]]] = None) -> list[ShellCommand]:
    """Lex and expand a script; returns every command with the environment it would see.

    `env_file_lines` collects (name, line) of lines read as env-file assignments.
    """
    expander = Expander(variables)
    commands: list[ShellCommand] = []
    env_file_lines = env_file_lines if env_file_lines is not None else []
    exported: set[str] = set()   # names `export` gave to every later command's environment
    for command in Lexer(text, powershell, file).run():
        prefix_env: dict[str, str] = {}
        words: Optional[list[Word]] = list(command.words)
        if words and words[0].literal in ("export", "declare", "local", "readonly"):
            is_export = words[0].literal == "export"
            words = [w for w in words[1:] if not w.literal.startswith("-")]
            _assign_all(words, expander)
            if is_export:
                exported.update(w.literal.split("=", 1)[0] for w in words)
            continue
        while words and _ASSIGNMENT.match(words[0].literal) and words[0].segments[0].quote == "":
            if len(words) > 1 and words[1].literal.startswith("-"):
                # `ARGS=--a --b x`: no command can start with a dash, so this is an env-file line
                # (docker --env-file keeps the whole rest of the line as the value).
                name, value = _assignment(words[0], expander)
                _set(expander.variables, name, None if value is None else " ".join([value] + [w.literal for w in words[1:]]))
                env_file_lines.append((name, command.line))
                words = None
                break
            name, value = _assignment(words[0], expander)
            if value is not None:
                prefix_env[name] = value
            words = words[1:]
        if words is None:
            continue
        if not words:
            _assign_all(command.words, expander)  # plain assignments: they set shell variables
            continue
        tokens: list[Token] = []
        scoped = Expander({**expander.variables, **prefix_env})
        kept, writes = _without_redirections(words)
        for word in kept:
            tokens += scoped.expand_word(word, file)
        environment = {name: str(expander.variables[name]) for name in sorted(exported)
                       if expander.variables.get(name) is not None}
        commands.append(ShellCommand(tokens, {**environment, **prefix_env}, command.line, command.heredocs,
                                     dict(scoped.variables) if command.heredocs else {},
                                     [scoped.expand_text(w)[0] for w in writes], list(scoped.dropped)))
    return commands


_REDIRECTION = re.compile(r"^\d*(>>?|<<?|&>>?|>&|<&)(.*)$")


def _without_redirections(words: list[Word]) -> tuple[list[Word], list[str]]:
    """The command's words less its redirections (`> log`, `2>&1`, `&>log`, `< in`), which are the shell's and
    not the program's arguments (a quoted `>` is an argument); and the files `>` / `>>` write."""
    out: list[Word] = []
    writes: list[str] = []
    target_of: Optional[str] = None
    for word in words:
        if target_of is not None:
            if target_of in (">", ">>"):
                writes.append(word.literal)
            target_of = None
            continue
        m = _REDIRECTION.match(word.literal) if word.segments and word.segments[0].quote == "" else None
        if m is None:
            out.append(word)
        elif not m.group(2):
            target_of = m.group(1)  # the target is the next word
        elif m.group(1) in (">", ">>") and not m.group(2).startswith("&"):
            writes.append(m.group(2))
    return out, writes


def _assign_all(words: list[Word], expander: Expander) -> None:
    for word in words:
        if _ASSIGNMENT.match(word.literal):
            name, value = _assignment(word, expander)
            _set(expander.variables, name, value)


def _set(variables: dict[str, str], name: str, value: Optional[str]) -> None:
    """A variable whose value we could not expand stays undefined, so its uses show up as placeholders."""
    if value is None:
        variables.pop(name, None)
    else:
        variables[name] = value


def _assignment(word: Word, expander: Expander) -> tuple[str, Optional[str]]:
    """`NAME=value` (the value may be quoted or contain expansions); no word splitting in assignments."""
    first = word.segments[0]
    name, _, rest = first.text.partition("=")
    value_word = Word([Segment(rest, first.quote)] + word.segments[1:], word.line)
    parts = []
    for seg in value_word.segments:
        if seg.quote == "'":
            parts.append(seg.text)
            continue
        text, missing = expander.expand_text(seg.text)
        if missing:
            return name, None
        parts.append(text)
    return name, "".join(parts)
