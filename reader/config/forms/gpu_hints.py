"""What a manifest says about the GPU: node labels, accelerator names and cloud instance types.

The names returned are GPU catalog ids/aliases; the catalog resolves them.
"""
from __future__ import annotations

import re
from typing import Any, Optional

# Node labels that name the GPU model.
_GPU_LABEL_KEYS = (
    "cloud.google.com/gke-accelerator",
    "nvidia.com/gpu.product",
    "karpenter.k8s.aws/instance-gpu-name",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
)

# Cloud instance families -> (GPU id, GPUs per instance). Sources: AWS EC2 accelerated-computing,
# Azure NC/ND series and GCP A2/A3/G2 machine-type documentation (public product pages).
INSTANCE_GPUS: dict[str, tuple[str, Optional[int]]] = {
    "g5.xlarge": ("A10G", 1), "g5.2xlarge": ("A10G", 1), "g5.12xlarge": ("A10G", 4), "g5.48xlarge": ("A10G", 8),
    "g6.xlarge": ("L4", 1), "g6.2xlarge": ("L4", 1), "g6.12xlarge": ("L4", 4), "g6.24xlarge": ("L4", 4),
    "g6.48xlarge": ("L4", 8),
    "g6e.xlarge": ("L40S", 1), "g6e.12xlarge": ("L40S", 4), "g6e.24xlarge": ("L40S", 4), "g6e.48xlarge": ("L40S", 8),
    "p4d.24xlarge": ("A100-40GB-SXM", 8), "p4de.24xlarge": ("A100-80GB-SXM", 8),
    "p5.48xlarge": ("H100-SXM", 8), "p5e.48xlarge": ("H200", 8), "p5en.48xlarge": ("H200", 8),
    "p6-b200.48xlarge": ("B200", 8),
    "a2-highgpu-1g": ("A100-40GB-SXM", 1), "a2-ultragpu-1g": ("A100-80GB-SXM", 1),
    "a3-highgpu-8g": ("H100-SXM", 8), "a3-megagpu-8g": ("H100-SXM", 8), "a3-ultragpu-8g": ("H200", 8),
    "g2-standard-4": ("L4", 1),
}
_AZURE = [(re.compile(r"Standard_NC\d+ads_H100_v5", re.I), "H100-NVL"),
          (re.compile(r"Standard_NC\d+adis_H100_v5", re.I), "H100-NVL"),
          (re.compile(r"Standard_ND\d+is?r?_H100_v5", re.I), "H100-SXM"),
          (re.compile(r"Standard_ND\d+is?r?_H200_v5", re.I), "H200"),
          (re.compile(r"Standard_NC\d+ads_A100_v4", re.I), "A100-80GB-PCIe"),
          (re.compile(r"Standard_ND\d+amsr_A100_v4", re.I), "A100-80GB-SXM")]

# GKE accelerator label values.
_GKE = {"nvidia-tesla-a100": "A100-40GB-SXM", "nvidia-a100-80gb": "A100-80GB-SXM", "nvidia-h100-80gb": "H100-SXM",
        "nvidia-h100-mega-80gb": "H100-SXM", "nvidia-h200-141gb": "H200", "nvidia-l4": "L4",
        "nvidia-tesla-t4": "T4", "nvidia-tesla-v100": "V100", "nvidia-b200": "B200"}


def gpu_from_instance_type(value: str) -> Optional[tuple[str, Optional[int]]]:
    value = value.strip()
    if value in INSTANCE_GPUS:
        return INSTANCE_GPUS[value]
    for pattern, gpu in _AZURE:
        if pattern.fullmatch(value):
            return gpu, None
    return None


def gpu_from_label(key: str, value: str) -> Optional[str]:
    if key == "cloud.google.com/gke-accelerator":
        return _GKE.get(value.strip(), value.strip())
    if key.endswith("instance-type"):
        found = gpu_from_instance_type(value)
        return found[0] if found else None
    return value.strip()


def gpu_from_labels(data: Any) -> Optional[tuple[str, str]]:
    """The first GPU-naming node label anywhere in the object: (name, where it came from)."""
    for key, value in _walk_pairs(data):
        if key in _GPU_LABEL_KEYS and isinstance(value, str):
            name = gpu_from_label(key, value)
            if name:
                return name, f"node selector {key}={value}"
        if isinstance(value, dict) and value.get("key") in _GPU_LABEL_KEYS and value.get("values"):
            first = str(value["values"][0])
            name = gpu_from_label(str(value["key"]), first)
            if name:
                return name, f"node affinity {value['key']}={first}"
    return None


def _walk_pairs(node: Any, depth: int = 0):
    if depth > 40:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key), value
            yield from _walk_pairs(value, depth + 1)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, dict):
                yield "", item
            yield from _walk_pairs(item, depth + 1)
