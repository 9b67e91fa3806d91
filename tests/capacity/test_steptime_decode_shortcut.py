"""The decode shortcut (StepTimeModel.decode_time), which the simulator's multi-step leaps call instead
of building each decode-only batch, gives exactly the float the model gives for such a batch: the leaps
must not move a single token time."""
from __future__ import annotations

import numpy as np
import pytest

from reader.batch import StepBatch
from reader.catalog.load import get_gpu, list_models
from reader.capacity.steptime import StepTimeModel

MODELS = list_models()


def _tp(model) -> int:
    return next(tp for tp in (8, 4, 2, 1) if model.num_attention_heads % tp == 0 and tp <= 8)


@pytest.mark.parametrize("model", MODELS, ids=[m.id for m in MODELS])
def test_decode_time_equals_the_batch_path_bit_for_bit(model):
    rng = np.random.default_rng(7)
    for gpu_name, eager in (("H100-SXM", False), ("A100-80GB-SXM", True)):
        stm = StepTimeModel(model, get_gpu(gpu_name), tp=_tp(model), enforce_eager=eager)
        windowed = any(window for layers, window in stm.attn_kinds if layers)
        if windowed:
            assert stm.decode_time is None  # the sum of contexts is not enough with sliding windows
            continue
        assert stm.decode_time is not None
        for n in (1, 3, 17, 64, 255, 700):
            past = rng.integers(0, 30_000, n).astype(np.int64)
            batch = StepBatch(np.ones(n, np.int64), past, n)
            assert stm.decode_time(n, int(past.sum()), n) == stm(batch), (gpu_name, n)


def test_without_split_kv_kernels_there_is_no_shortcut():
    model = next(m for m in MODELS if m.id == "meta-llama/Llama-3.1-8B")
    assert StepTimeModel(model, get_gpu("H100-SXM"), split_kv=False).decode_time is None
