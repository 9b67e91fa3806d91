"""The decode shortcut (StepTimeModel.decode_time), which the simulator's multi-step leaps call instead
of building each decode-only batch, gives exactly the float the model gives for such a batch: the leaps
must not move a single token time. Sliding-window models have no shortcut (their time is not a function of
the total context), so their leaps build every batch."""
from __future__ import annotations

import numpy as np
import pytest

from reader.batch import StepBatch
from reader.catalog.load import get_gpu, list_models
from reader.calibration.profile import default_calibration
from reader.capacity.steptime import StepTimeModel

MODELS = list_models()


def _tp(model) -> int:
    return next(tp for tp in (8, 4, 2, 1) if model.num_attention_heads % tp == 0 and tp <= 8)


GPUS = (("H100-SXM", False), ("A100-80GB-SXM", True))


def _windowed(model) -> bool:
    stm = StepTimeModel(model, get_gpu("H100-SXM"), default_calibration(get_gpu("H100-SXM").id), tp=_tp(model))
    return any(window for layers, window in stm.attn_kinds if layers)


FULL = [m for m in MODELS if not _windowed(m)]
WINDOWED = [m for m in MODELS if _windowed(m)]


def test_both_kinds_of_model_are_in_the_catalog():
    assert len(FULL) >= 20 and len(WINDOWED) >= 3


@pytest.mark.parametrize("model", FULL, ids=[m.id for m in FULL])
def test_decode_time_equals_the_batch_path_bit_for_bit(model):
    rng = np.random.default_rng(7)
    for gpu_name, eager in GPUS:
        stm = StepTimeModel(model, get_gpu(gpu_name), default_calibration(get_gpu(gpu_name).id), tp=_tp(model), enforce_eager=eager)
        assert stm.decode_time is not None
        for n in (1, 3, 17, 64, 255, 700):
            past = rng.integers(0, 30_000, n).astype(np.int64)
            batch = StepBatch(np.ones(n, np.int64), past, n)
            assert stm.decode_time(n, int(past.sum()), n) == stm(batch), (gpu_name, n)


@pytest.mark.parametrize("model", WINDOWED, ids=[m.id for m in WINDOWED])
def test_a_sliding_window_model_has_no_shortcut_because_the_sum_of_contexts_is_not_enough(model):
    # With a window W, a context of 64W reads only W in the windowed layers: two decode batches with the same
    # number of requests and the same total context take different times (shown with CUDA graphs; in eager mode
    # on an A100 launch costs hide it for small windows), so no function of (n, total context) can give the
    # batch's float, and the simulator builds each batch (decode_time is None) instead of leaping with a wrong one.
    for gpu_name, eager in GPUS:
        assert StepTimeModel(model, get_gpu(gpu_name), default_calibration(get_gpu(gpu_name).id), tp=_tp(model), enforce_eager=eager).decode_time is None
    stm = StepTimeModel(model, get_gpu("H100-SXM"), default_calibration(get_gpu("H100-SXM").id), tp=_tp(model))
    window = max(w for layers, w in stm.attn_kinds if layers and w)
    lopsided = StepBatch(np.ones(2, np.int64), np.array([0, 64 * window], np.int64), 2)
    even = StepBatch(np.ones(2, np.int64), np.array([32 * window, 32 * window], np.int64), 2)
    assert stm(lopsided) < stm(even)


def test_without_split_kv_kernels_there_is_no_shortcut():
    model = next(m for m in MODELS if m.id == "meta-llama/Llama-3.1-8B")
    assert StepTimeModel(model, get_gpu("H100-SXM"), default_calibration(get_gpu("H100-SXM").id), split_kv=False).decode_time is None
