"""A model given as a storage URI (KServe `storageUri` / `spec.model.uri`, KubeAI `url`, llm-d `modelArtifacts.uri`,
or `vllm serve s3://...` with the Run:ai streamer): the part that names the model.

`hf://org/name[:revision]` is a Hugging Face id. For the others (`s3://bucket/path`, `gs://`, `gcs://`,
`pvc://claim/path`, `oci://registry/repo:tag` model cars, `oss://`, `azure://`) the scheme and any tag are
stripped and the rest is read like a path inside the serving container: the model is inferred from its last
components, and the report says so. Sources: KServe storage URIs
(https://kserve.github.io/website/latest/modelserving/storage/), KubeAI Model.spec.url
(https://www.kubeai.org/reference/kubernetes-api/).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

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
        last = rest.rsplit("/", 1)
        tail = re.sub(r"[:@].*$", "", last[-1])  # drop the tag or digest of a model car image
        rest = "/".join(last[:-1] + [tail])
    return ModelUri(text.strip(), scheme, rest)


def note_for(uri: ModelUri) -> str:
    if uri.scheme == "hf":
        return f"the model is given as the storage URI {uri.uri}: read as the Hugging Face id {uri.model}"
    return (f"the model is given as the storage URI {uri.uri}: its path part '{uri.model}' is read like a path inside "
            "the container, and the model is inferred from its last components; name it with --model if that is wrong")
