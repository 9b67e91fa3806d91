"""A model folder as vLLM reads it, whoever made it (the user, the Hugging Face cache, a download, the
shipped catalog): `config.json` with its `quantization_config`, ModelOpt's `hf_quant_config.json`
beside it, AutoGPTQ's `quantize_config.json` or AutoAWQ's `quant_config.json` beside it (which vLLM reads only
under --quantization), or Mistral's `params.json`.

vLLM (vllm/transformers_utils/config.py get_config @ v0.32.0) reads a repository in Mistral format
when it ships `params.json` with `consolidated*.safetensors` weights (or `--config-format mistral`
asks for it), and `config.json` otherwise; in Mistral format `config.json`, when present, only fills
keys `params.json` lacks. A folder with `params.json` and no `config.json` can only be Mistral format.
Only JSON is parsed and only file names are listed: nothing in the folder is executed or loaded.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

from ..errors import ReaderError
from .hf_config import CONFIG_NAME, MODELOPT_SIDECAR, read_json, spec_from_config
from .hf_quant import QUANT_FILES
from .types import ModelSpec

PARAMS_NAME = "params.json"
MODEL_FILE_NAMES = (CONFIG_NAME, PARAMS_NAME, MODELOPT_SIDECAR)
_MISTRAL_SOURCE = "vllm/transformers_utils/configs/mistral.py adapt_config_dict @ v0.32.0"

Format = Literal["hf", "mistral"]


@dataclass(frozen=True)
class ModelFiles:
    """The files of one model that vLLM reads for its shape, and in which format."""

    folder: Path
    fmt: Format
    config: Optional[Path] = None  # config.json (the shape in hf format; defaults in mistral format)
    params: Optional[Path] = None  # params.json (mistral format)
    modelopt: Optional[Path] = None  # hf_quant_config.json
    quant_file: Optional[Path] = None  # quantize_config.json / quant_config.json

    @property
    def main(self) -> Path:
        main = self.params if self.fmt == "mistral" else self.config
        assert main is not None
        return main

    def describe(self) -> str:
        names = [p.name for p in (self.config, self.params, self.modelopt, self.quant_file) if p is not None]
        return f"{self.folder} ({', '.join(names)})"


def has_model_files(folder: Path) -> bool:
    return folder.is_dir() and any((folder / name).is_file() for name in (CONFIG_NAME, PARAMS_NAME))


def find_model_files(path: str | Path, config_format: Optional[str] = None) -> ModelFiles:
    """The files a user's path means: a folder holding config.json / params.json, or one such file."""
    p = Path(path).expanduser()
    if p.is_file():
        folder = p.parent
        if p.name == PARAMS_NAME:
            return _files(folder, "mistral", config=_beside(folder, CONFIG_NAME), params=p)
        return _files(folder, "hf", config=p)
    if not p.is_dir():
        raise ReaderError(f"no such file or folder: '{path}'.", file=str(path))
    config, params = _beside(p, CONFIG_NAME), _beside(p, PARAMS_NAME)
    if config is None and params is None:
        raise ReaderError(f"the folder '{path}' has neither {CONFIG_NAME} nor {PARAMS_NAME}.", file=str(path),
                          hint="Point to a Hugging Face model folder or to its config.json.")
    return _files(p, _format(p, config, params, config_format), config=config, params=params)


def _beside(folder: Path, name: str) -> Optional[Path]:
    path = folder / name
    return path if path.is_file() else None


def _files(folder: Path, fmt: Format, *, config: Optional[Path] = None, params: Optional[Path] = None) -> ModelFiles:
    quant_file = next((path for name in QUANT_FILES if (path := _beside(folder, name))), None)
    return ModelFiles(folder=folder, fmt=fmt, config=config, params=params, modelopt=_beside(folder, MODELOPT_SIDECAR),
                      quant_file=quant_file)


def _format(folder: Path, config: Optional[Path], params: Optional[Path], config_format: Optional[str]) -> Format:
    if params is None:
        return "hf"
    if config is None or config_format == "mistral":
        return "mistral"
    if config_format == "hf":
        return "hf"
    return "mistral" if any(folder.glob("consolidated*.safetensors")) else "hf"


def read_model_files(files: ModelFiles, *, model_id: str, source: str) -> ModelSpec:
    """The ModelSpec of a model's files (the one reader every way in goes through)."""
    modelopt = read_json(files.modelopt) if files.modelopt else None
    quant_file = (files.quant_file.name, read_json(files.quant_file)) if files.quant_file else None
    if files.fmt == "hf":
        config = read_json(files.main)
        linked = linked_text_model(config, str(files.main))
        if linked is not None:
            return _wrapping(linked, config, model_id, source, str(files.main))
        return spec_from_config(config, model_id=model_id, source=source, file=str(files.main),
                                modelopt=modelopt, quant_file=quant_file)
    defaults = read_json(files.config) if files.config else {}
    config = config_from_params(read_json(files.main), defaults, str(files.main))
    return spec_from_config(config, model_id=model_id, source=source, file=str(files.main), modelopt=modelopt)


def linked_text_model(config: dict[str, Any], file: str) -> Optional[str]:
    """The repository of the language model an Ultravox config wraps: text_model_id, whose own config vLLM loads
    in place of any text_config (UltravoxConfig, vllm/transformers_utils/configs/ultravox.py @ v0.32.0 and
    v0.18.0); None where the language model's shape is in this file."""
    if config.get("model_type") != "ultravox" or config.get("text_model_id") is None:
        return None
    linked = config["text_model_id"]
    if not isinstance(linked, str) or not linked.strip():
        raise ReaderError(f"expected the language model's Hugging Face id, got {linked!r}.",
                          file=file, key="text_model_id")
    return linked.strip()


def _wrapping(linked: str, config: dict[str, Any], model_id: str, source: str, file: str) -> ModelSpec:
    """The wrapper as its language model, read by the same resolver as any model vllm-reader is given."""
    from .resolution import resolve_model

    found = resolve_model(linked)
    if not found.found:
        raise ReaderError(f"the language model {linked}, whose shape vLLM reads from its own repository, is not "
                          f"to be found ({found.problem or 'not found'}).", file=file, key="text_model_id",
                          hint=f"Put {linked}'s config.json in the Hugging Face cache (`huggingface-cli download "
                          f"{linked} config.json`), or give the language model itself with --model.")
    text = found.spec
    architectures = tuple(a for a in config.get("architectures") or () if isinstance(a, str))
    note = (f"the language model is {text.id} (text_model_id, read from {found.location}); the audio encoder and "
            "projector are not counted")
    return text.model_copy(update={
        "id": model_id, "aliases": (), "architectures": architectures or text.architectures,
        "is_multimodal": True, "source": f"{source}; language model: {text.source}",
        "notes": f"{note}. {text.notes}".strip() if text.notes else note + "."})


def read_model_path(path: str | Path, *, model_id: Optional[str] = None, source: Optional[str] = None,
                    config_format: Optional[str] = None) -> ModelSpec:
    files = find_model_files(path, config_format)
    return read_model_files(files, model_id=model_id or str(path), source=source or f"local files {files.describe()}")


# ---------------------------------------------------------------------------------------------
# Mistral format: params.json keys -> the config.json keys vLLM maps them to

_PARAMS_KEYS = {"dim": "hidden_size", "n_layers": "num_hidden_layers", "n_heads": "num_attention_heads",
                "n_kv_heads": "num_key_value_heads", "hidden_dim": "intermediate_size",
                "tied_embeddings": "tie_word_embeddings"}
# params.json without max_position_embeddings: config.json's value, else 128000 (vLLM
# _maybe_retrieve_max_pos_from_hf @ v0.32.0); max_seq_len is not the model's length.
_PARAMS_DEFAULTS = {"tie_word_embeddings": False, "max_position_embeddings": 128_000}


def config_from_params(params: dict[str, Any], defaults: dict[str, Any], file: str) -> dict[str, Any]:
    """The config.json that vLLM builds from a Mistral params.json (keys renamed, sliding window as
    layer types, MoE and quantization sections moved), with config.json's keys as defaults."""
    config = {_PARAMS_KEYS.get(key, key): value for key, value in params.items() if key != "max_seq_len"}
    if config.get("moe"):
        # vLLM maps a params.json `moe` section only for Mistral Large 3 (MLA, shared experts); for a
        # Mixtral-style model it builds a config without num_local_experts, which its Mixtral class needs.
        raise ReaderError("params.json has a `moe` section, which vLLM reads into no expert count for a "
                          f"Mixtral-style model ({_MISTRAL_SOURCE}): it cannot load the model in Mistral format.",
                          file=file, key="moe", hint="Use the repository's config.json (vLLM: --config-format hf).")
    if config.get("qk_nope_head_dim"):
        raise ReaderError("params.json describes a multi-head latent attention model (Mistral Large 3), which "
                          "vllm-reader reads only from its config.json.", file=file, key="qk_nope_head_dim",
                          hint="Point --model at the folder's config.json.")
    config["model_type"] = "mistral"  # params.json says "transformer"
    config["architectures"] = ["MistralForCausalLM"]
    _params_sliding_window(config, file)
    _params_quantization(config, file)
    if config.get("vision_encoder") or config.get("multimodal"):
        config["vision_config"] = {"from": "params.json"}
    text_defaults = defaults.get("text_config") if isinstance(defaults.get("text_config"), dict) else defaults
    for key, value in {**_PARAMS_DEFAULTS, **text_defaults}.items():
        config.setdefault(key, value)
    return config


def _params_sliding_window(config: dict[str, Any], file: str) -> None:
    window = config.get("sliding_window")
    layers = config.get("num_hidden_layers")
    if not window or not isinstance(layers, int):
        return
    if isinstance(window, int):
        config.setdefault("layer_types", ["sliding_attention"] * layers)
        return
    if not isinstance(window, list) or not window or len({w for w in window if w is not None}) > 1:
        raise ReaderError(f"expected a window size or a list of one window size and nulls, got {window!r}.",
                          file=file, key="sliding_window")
    pattern = window * (layers // len(window))
    config["layer_types"] = ["full_attention" if w is None else "sliding_attention" for w in pattern]
    config["sliding_window"] = next((w for w in window if w is not None), None)


def _params_quantization(config: dict[str, Any], file: str) -> None:
    quant = config.pop("quantization", None)
    if not quant:
        return
    if not isinstance(quant, dict):
        raise ReaderError(f"expected an object, got {quant!r}.", file=file, key="quantization")
    if quant.get("qformat_weight") == "fp8_e4m3":
        config["quantization_config"] = {"quant_method": "fp8"}
    elif str(quant.get("quant_method", "")).lower().replace("_", "-") == "compressed-tensors":
        config["quantization_config"] = {**quant, "quant_method": "compressed-tensors"}
    else:
        raise ReaderError(f"unknown quantization {quant!r} (vLLM knows fp8_e4m3 and compressed-tensors here, "
                          f"{_MISTRAL_SOURCE}).", file=file, key="quantization")


__all__ = ["ModelFiles", "find_model_files", "read_model_files", "read_model_path", "has_model_files",
           "config_from_params", "PARAMS_NAME", "MODEL_FILE_NAMES"]
