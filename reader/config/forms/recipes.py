"""Makefiles and justfiles: the recipes whose commands launch vLLM, with the file's variables expanded.

make: `NAME = v` (expanded when used), `NAME := v` / `::=` (expanded now), `NAME ?= v` (unless set), `NAME += v`,
`export`/`override` prefixes; `$(NAME)` / `${NAME}` in recipes, `$$` for a shell `$`; recipe lines start
with a tab and may begin with `@`, `-`, `+`. Functions (`$(shell ...)`, `$(wildcard ...)`) are never run: they
stay as placeholders. Source: GNU make manual, "Setting Variables", "Recipe Syntax", "Variables in Recipes".

just: `name := "value"` (quoted strings, other variables, `+` concatenation, `/` joins), `set export`,
recipes `name param='default':` with indented bodies, `{{expr}}` interpolation, shebang recipes run as one
script. Source: https://just.systems/man/en/ (Settings, Recipe Parameters, Strings, Shebang Recipes).

`--set NAME=VALUE` overrides a variable, as `make NAME=VALUE` / `just NAME=VALUE` would. A recipe parameter
with no default, or a variable we cannot evaluate, becomes a placeholder the report names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..invocation import Invocation
from .scripts import script_invocations

_MAKE_ASSIGN = re.compile(r"^(?:(export|override)\s+)?([A-Za-z_][\w.-]*)\s*(::=|:::=|:=|\?=|\+=|!=|=)\s*(.*)$")
_MAKE_RULE = re.compile(r"^([^\s:#=][^:=#]*?)\s*:(?![=:])\s*([^;=]*?)\s*(?:;(.*))?$")
_MAKE_REF = re.compile(r"\$(?:\(([^()$]+)\)|\{([^{}$]+)\}|([@<^]))")
_JUST_ASSIGN = re.compile(r"^(export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(.+)$")
_JUST_RECIPE = re.compile(r"^(@)?([A-Za-z_][\w-]*)((?:\s+[+*$]?[A-Za-z_][\w-]*(?:=(?:'[^']*'|\"[^\"]*\"|\S+))?)*)"
                          r"\s*:(?!=)(.*)$")
_JUST_INTERP = re.compile(r"\{\{(?!\{)\s*(.*?)\s*\}\}")


@dataclass
class Recipe:
    target: str
    line: int  # line of the rule / recipe header
    lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, text)
    params: dict[str, Optional[str]] = field(default_factory=dict)  # just: name -> default (None: required)
    shebang: bool = False


# ---- make ----------------------------------------------------------------------------------

def makefile(text: str, path: Optional[str], set_vars: dict[str, str]) -> tuple[list[Invocation], str]:
    variables: dict[str, tuple[str, bool]] = {}  # name -> (value, expand-when-used)
    exported: set[str] = set()
    recipes: list[Recipe] = []
    current: Optional[Recipe] = None
    raw = text.splitlines()
    i = 0
    while i < len(raw):
        number, line = i + 1, raw[i]
        while line.endswith("\\") and not line.startswith("\t") and i + 1 < len(raw):
            i += 1
            line = line[:-1] + " " + raw[i].strip()
        i += 1
        if line.startswith("\t") and current is not None:
            current.lines.append((number, line[1:]))
            while line.endswith("\\") and i < len(raw):  # a continued recipe line goes to the shell as is
                line = raw[i]
                current.lines.append((i + 1, line.lstrip("\t")))
                i += 1
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        current = None
        assign = _MAKE_ASSIGN.match(line)
        if assign:
            _make_assign(assign, variables, exported, set_vars)
            continue
        if line.startswith(("export ", "unexport ")):
            if line.startswith("export "):
                exported.update(line.split()[1:])
            continue
        rule = _MAKE_RULE.match(line)
        if rule:
            for target in rule.group(1).split():
                if not target.startswith("."):
                    current = Recipe(target, number)
                    recipes.append(current)
            if current is not None and rule.group(3):
                current.lines.append((number, rule.group(3).strip()))
    found: list[Invocation] = []
    env = {name: _make_expand(variables.get(name, ("", False))[0], variables, set_vars, "")
           for name in exported if name in variables}
    for recipe in recipes:
        for number, line in _recipe_commands(recipe.lines):
            command = _make_expand(line.lstrip("@-+ "), variables, set_vars, recipe.target)
            found += _label(script_invocations("\n" * (number - 1) + command, path, {**env, **set_vars}, "makefile"),
                            f"target '{recipe.target}'")
    return found, f"searched the recipes of {len(recipes)} target(s)"


def _make_assign(m: re.Match[str], variables: dict[str, tuple[str, bool]], exported: set[str],
                 set_vars: dict[str, str]) -> None:
    prefix, name, op, value = m.groups()
    if prefix == "export":
        exported.add(name)
    if name in set_vars:
        return  # a command-line variable wins over the file's assignments
    if op == "?=" and name in variables:
        return
    if op == "!=":
        variables[name] = (f"$(shell {value})", False)  # a shell assignment: never run
    elif op == "+=" and name in variables:
        old, lazy = variables[name]
        variables[name] = (f"{old} {value}".strip(), lazy)
    elif op in (":=", "::=", ":::="):
        variables[name] = (_make_expand(value, variables, set_vars, ""), False)
    else:
        variables[name] = (value, True)


def _make_expand(text: str, variables: dict[str, tuple[str, bool]], set_vars: dict[str, str], target: str,
                 depth: int = 0) -> str:
    """make's `$(X)`, `${X}`, `$@` and `$$`; a function or an unknown variable stays as a placeholder the shell
    reader reports (`$(X)`), so --set X=... can fill it."""
    if depth > 20:
        return text

    def replace(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if m.group(3):
            return target if m.group(3) == "@" else m.group(0)
        if name in set_vars:
            return set_vars[name]
        if name in variables:
            return _make_expand(variables[name][0], variables, set_vars, target, depth + 1)
        return m.group(0)

    parts = text.split("$$")
    return "$".join(_MAKE_REF.sub(replace, part) for part in parts)


def _recipe_commands(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Recipe lines joined across their backslash continuations (each logical line is one shell command)."""
    out: list[tuple[int, str]] = []
    for number, text in lines:
        if out and out[-1][1].endswith("\\"):
            out[-1] = (out[-1][0], out[-1][1] + "\n" + text)
        else:
            out.append((number, text))
    return out


# ---- just -----------------------------------------------------------------------------------

def justfile(text: str, path: Optional[str], set_vars: dict[str, str]) -> tuple[list[Invocation], str]:
    variables: dict[str, Optional[str]] = {}
    exported: set[str] = set()
    export_all = False
    recipes: list[Recipe] = []
    current: Optional[Recipe] = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue  # a blank line does not end a recipe body
        if current is not None and line[:1] in (" ", "\t"):
            current.lines.append((number, line))
            continue
        current = None
        if line.startswith("#"):
            continue
        if re.match(r"^set\s+export\b(?!\s*:=\s*false)", line):
            export_all = True
            continue
        assign = _JUST_ASSIGN.match(line)
        if assign:
            name = assign.group(2)
            variables[name] = set_vars.get(name, _just_value(assign.group(3), variables))
            if assign.group(1):
                exported.add(name)
            continue
        header = _JUST_RECIPE.match(line)
        if header and not line.startswith(("alias ", "import ", "mod ", "set ")):
            current = Recipe(header.group(2), number, params=_just_params(header.group(3), variables))
            recipes.append(current)
    found: list[Invocation] = []
    for recipe in recipes:
        body = _dedent(recipe.lines)
        scope = {**variables, **recipe.params, **{k: v for k, v in set_vars.items()}}
        env = {k: v for k, v in scope.items() if v is not None and (export_all or k in exported)}
        shebang = bool(body) and body[0][1].startswith("#!")
        commands = [(body[0][0], "\n".join(t for _, t in body))] if shebang else \
            [(n, t.lstrip("@-")) for n, t in body]
        for number, command in commands:
            script = "\n" * (number - 1) + _just_interpolate(command, scope)
            found += _label(script_invocations(script, path, {**env, **set_vars}, "justfile"),
                            f"recipe '{recipe.target}'")
    return found, f"searched the bodies of {len(recipes)} recipe(s)"


def _just_value(expr: str, variables: dict[str, Optional[str]]) -> Optional[str]:
    """A string literal, a variable, or `a + b` / `a / b` of them; None when it needs evaluation we do not do."""
    out = ""
    for op, term in re.findall(r"(^|\+|/)\s*('[^']*'|\"(?:[^\"\\]|\\.)*\"|[A-Za-z_][\w-]*|`[^`]*`|\S+)\s*", expr):
        if term[:1] in ("'", '"'):
            value: Optional[str] = term[1:-1]
        elif re.fullmatch(r"[A-Za-z_][\w-]*", term):
            value = variables.get(term)
        else:
            value = None  # a backtick command or a function call: never run
        if value is None:
            return None
        out = f"{out}/{value}" if op == "/" else out + value
    return out


def _just_params(text: str, variables: dict[str, Optional[str]]) -> dict[str, Optional[str]]:
    params: dict[str, Optional[str]] = {}
    for word in text.split():
        name, eq, default = word.lstrip("+*$").partition("=")
        params[name] = _just_value(default, variables) if eq else None
    return params


def _just_interpolate(text: str, scope: dict[str, Optional[str]]) -> str:
    """`{{name}}` from the recipe's scope; what has no value becomes `${name}`, a placeholder the shell reader
    reports and --set fills."""
    def replace(m: re.Match[str]) -> str:
        expr = m.group(1)
        value = _just_value(expr, scope)
        if value is not None:
            return value
        name = re.sub(r"\W", "_", expr) or "value"
        return "${" + name + "}"

    return _JUST_INTERP.sub(replace, text).replace("{{{{", "{{")


def _dedent(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    width = min((len(t) - len(t.lstrip()) for _, t in lines if t.strip()), default=0)
    return [(n, t[width:]) for n, t in lines]


def _label(found: list[Invocation], where: str) -> list[Invocation]:
    for inv in found:
        inv.label = f"{where}, {inv.label}"
    return found
