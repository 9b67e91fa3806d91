"""The local Hugging Face cache, read in the hub's own layout without importing huggingface_hub.

    <cache>/models--<org>--<name>/refs/<branch or tag>      holds the commit hash
    <cache>/models--<org>--<name>/snapshots/<commit>/...    the files of that commit

The cache folder is found as huggingface_hub finds it (huggingface_hub/constants.py @ v2.4.0):
HF_HUB_CACHE, else the legacy HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
$XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. A revision is a branch or tag
(looked up in refs/) or a commit hash (a snapshot folder of that name); none means `main`, as in vLLM.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from .model_files import has_model_files

_COMMIT = re.compile(r"[0-9a-f]{40}")
_REPO_FOLDER = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)$")


def hub_cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    for key in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(key):
            return _expand(env[key])
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"), "huggingface")
    return _expand(home) / "hub"


def _expand(path: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(path)))


def repo_folder_name(repo_id: str) -> str:
    return "models--" + repo_id.replace("/", "--")


def repo_id_from_folder(name: str) -> Optional[str]:
    """`models--Qwen--Qwen1.5-7B-Chat` -> `Qwen/Qwen1.5-7B-Chat` (None for any other name)."""
    match = _REPO_FOLDER.match(name)
    return f"{match['org']}/{match['name']}" if match else None


@dataclass(frozen=True)
class Snapshot:
    """One cached commit of a repository."""

    repo_id: str
    revision: str  # as asked ("main" when none was)
    commit: str
    folder: Path


@dataclass(frozen=True)
class CacheMiss:
    """Why the cache could not answer, in words for the report."""

    reason: str = ""  # empty: the cache has no folder for the repository at all


def find_snapshot(repo_id: str, revision: Optional[str] = None, cache: Optional[Path] = None) -> Snapshot | CacheMiss:
    """The cached snapshot of `repo_id` at `revision`, if it holds the files vLLM reads for the shape."""
    cache = cache if cache is not None else hub_cache_dir()
    repo = _repo_dir(cache, repo_id)
    if repo is None:
        return CacheMiss()
    rev = revision or "main"
    commit = rev if _COMMIT.fullmatch(rev) else _read_ref(repo, rev)
    if commit is None:
        return CacheMiss(f"the Hugging Face cache has {repo.name} but no ref '{rev}' in it")
    folder = repo / "snapshots" / commit
    if not has_model_files(folder):
        return CacheMiss(f"the Hugging Face cache has no config.json for {repo_id} at {rev} ({folder})")
    return Snapshot(repo_id=repo_id_from_folder(repo.name) or repo_id, revision=rev,
                    commit=commit, folder=folder)


def _repo_dir(cache: Path, repo_id: str) -> Optional[Path]:
    exact = cache / repo_folder_name(repo_id)
    if exact.is_dir():
        return exact
    wanted = repo_folder_name(repo_id).lower()  # Hub ids are case-insensitive; folders keep the asked spelling
    try:
        return next((p for p in cache.iterdir() if p.name.lower() == wanted and p.is_dir()), None)
    except OSError:
        return None


def _read_ref(repo: Path, rev: str) -> Optional[str]:
    ref = repo / "refs" / rev
    try:
        commit = ref.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return commit if _COMMIT.fullmatch(commit) else None


def cached_repo_ids(cache: Optional[Path] = None) -> list[str]:
    """Every model repository the cache holds a folder for (for matching a bare model name)."""
    cache = cache if cache is not None else hub_cache_dir()
    try:
        names = sorted(p.name for p in cache.iterdir())
    except OSError:
        return []
    return [repo for repo in map(repo_id_from_folder, names) if repo]


__all__ = ["hub_cache_dir", "find_snapshot", "Snapshot", "CacheMiss", "cached_repo_ids", "repo_id_from_folder",
           "repo_folder_name"]
