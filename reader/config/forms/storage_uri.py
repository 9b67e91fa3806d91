"""A model given as a storage URI (KServe `storageUri` / `spec.model.uri`, KubeAI `url`, llm-d `modelArtifacts.uri`,
or `vllm serve s3://...` with the Run:ai streamer): the part that names the model.

`hf://org/name[:revision]` is a Hugging Face id. For the others (`s3://bucket/path`, `gs://`, `gcs://`,
`pvc://claim/path`, `oci://registry/repo:tag` model cars, `oss://`, `azure://`) the scheme and any tag are
stripped and the rest is read like a path inside the serving container: the model is inferred from its last
components, and the report says so. A model car is named by its repository (`modelcar-granite-3-1-8b-instruct`,
version dots written as dashes) or, in a catalog repository, by its tag (`modelcar-catalog:llama-3.2-3b-instruct`).
KServe downloads the URI to /mnt/models, so a launch whose model is /mnt/models serves it; Helm charts for KServe
give it as `storageUri` or as a `model` mapping (`{mode: uri, uri: oci://...}`).
Sources: KServe storage URIs (https://kserve.github.io/website/latest/modelserving/storage/), KubeAI
Model.spec.url (https://www.kubeai.org/reference/kubernetes-api/), Red Hat's model car catalog
(https://github.com/redhat-ai-services/modelcar-catalog) and its vllm-kserve chart
(redhat-ai-services/helm-charts charts/vllm-kserve: `model.mode`, `model.uri` become `storageUri`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from ..invocation import Hint, Invocation
from ..model import Note, SourceLoc
from ..tokens import Token
from ..yamlsafe import Path

MOUNT = "/mnt/models"
_URI_KEYS = ("storageUri", "uri", "modelUri", "url")
# A tag that is a release of the image, not a model's name: 1.5, v2.0-1234, latest.
_VERSION_TAG = re.compile(r"v?\d[\w.\-]*|latest|stable|main", re.I)

_URI = re.compile(r"^(hf|s3|gs|gcs|pvc|oci|oss|azure|ollama)://(.+)$", re.I)


@dataclass(frozen=True)
class ModelUri:
    uri: str
    scheme: str
    model: str  # the Hugging Face id (hf://) or the path part, as a path inside the container


def parse_model_uri(text: Optional[str]) -> Optional[ModelUri]:
    if not text:
        return None
    m = _URI.match(text.strip())
    if not m:
        return None
    scheme, rest = m.group(1).lower(), m.group(2).strip("/")
    if scheme == "hf":
        rest = rest.split(":", 1)[0]  # hf://org/name:revision
    elif scheme == "oci":
        rest = _model_car_path(rest)
    return ModelUri(text.strip(), scheme, rest)


def _model_car_path(rest: str) -> str:
    """The image reference with its last component replaced by the model's name."""
    parent, _, last = rest.rpartition("/")
    repo, tag = re.split(r"[@]", last, 1)[0], ""
    if ":" in repo:
        repo, tag = repo.split(":", 1)
    name = tag if tag and not _VERSION_TAG.fullmatch(tag) else repo
    name = re.sub(r"^modelcar-|-modelcar$", "", name, flags=re.I)
    # Image names hold no version dots in Red Hat's model cars: granite-3-1-8b is granite-3.1-8b.
    name = re.sub(r"(?<=-)(\d+)-(\d+)(?=-\d+(\.\d+)?[bm]\b)", r"\1.\2", name, flags=re.I)
    return f"{parent}/{name}" if parent else name


def model_mapping_uri(value: Any) -> Optional[str]:
    """A `model:` written as a mapping (`{mode: uri, uri: oci://...}`): the storage URI it names, if any."""
    if not isinstance(value, dict) or str(value.get("mode", "uri")).lower() != "uri":
        return None
    return next((str(value[k]) for k in _URI_KEYS if isinstance(value.get(k), str) and parse_model_uri(value[k])),
                None)


def storage_uri_in(data: Any, path: Path = ()) -> Optional[tuple[str, Path]]:
    """The storage URI a values file gives for the model: a `storageUri`, or the URI of a `model` mapping."""
    if isinstance(data, list):
        data = dict(enumerate(data))
    if not isinstance(data, dict):
        return None
    for key, value in data.items():
        if key == "storageUri" and isinstance(value, str) and parse_model_uri(value):
            return value, path + (key,)
        uri = model_mapping_uri(value) if key == "model" else None
        if uri is not None:
            return uri, path + (key,)
        found = storage_uri_in(value, path + (key,)) if isinstance(value, (dict, list)) else None
        if found is not None:
            return found
    return None


def serve_storage_uri(inv: Invocation, uri: str, loc: SourceLoc, origin: str) -> None:
    """A model argument pointing at KServe's download folder serves the URI downloaded there."""
    for i, tok in enumerate(inv.tokens):
        flag, eq, value = tok.text.partition("=")
        mount = value if eq and flag in ("--model", "--model_dir") else tok.text
        if mount.rstrip("/") == MOUNT:
            inv.tokens[i] = Token(f"{flag}={uri}" if eq else uri, tok.loc, (), tok.spelling)
            inv.notes.append(Note(level="info", loc=loc, message=(
                f"KServe downloads {origin} to {MOUNT}, so the model served is {uri}")))
            return
    if inv.model is None:
        inv.model = Hint(uri, origin, loc)


def note_for(uri: ModelUri) -> str:
    if uri.scheme == "hf":
        return f"the model is given as the storage URI {uri.uri}: read as the Hugging Face id {uri.model}"
    part = "model car image is read as the folder" if uri.scheme == "oci" else "path part is read as"
    return (f"the model is given as the storage URI {uri.uri}: its {part} '{uri.model}' inside the container, and "
            "the model is inferred from its last components; name it with --model if that is wrong")
