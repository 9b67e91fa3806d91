"""How long the CPU vLLM takes to prefill one prompt alone, by prompt length: the evidence for which loads a bench
fit needs (README, "Which loads to fit").

Runs vLLM's offline engine (the CPU build from tools/vllm_env.sh) on the dummy-weight tiny Llama with the CPU
fixtures' scheduler settings (fixtures/calibration/cpu-tiny-llama/deployment.yaml: 512-token budget, 128-token
blocks, eager, no prefix caching), sends one prompt of random token ids at a time with one output token, and
prints the median wall time over the rounds per prompt length. The figures include the offline front end
(request in, output out), as a lone bench request's TTFT does.

    eval "$(bash tools/vllm_env.sh 0.32.0)"
    HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=1 "$VLLM_READER_VLLM_0_32_0/bin/python" tools/measure_cpu_prefill.py
"""
from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "live" / "tiny-llama"
LENGTHS = (16, 64, 128, 256, 384, 512, 768, 1024, 1536, 2000)
ROUNDS = 5


def main() -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    llm = LLM(model=str(TINY), load_format="dummy", dtype="bfloat16", max_model_len=2048, max_num_seqs=16,
              max_num_batched_tokens=512, block_size=128, enforce_eager=True, enable_prefix_caching=False,
              skip_tokenizer_init=True)
    params = SamplingParams(max_tokens=1, ignore_eos=True, temperature=0, detokenize=False)
    ids = random.Random(0)

    def once(length: int) -> float:
        prompt = TokensPrompt(prompt_token_ids=[ids.randrange(3, 1000) for _ in range(length)])
        start = time.perf_counter()
        llm.generate([prompt], params, use_tqdm=False)
        return time.perf_counter() - start

    for _ in range(3):
        once(256)  # warm-up: the first steps allocate and compile
    times: dict[int, list[float]] = {n: [] for n in LENGTHS}
    for _ in range(ROUNDS):
        for n in LENGTHS:
            times[n].append(once(n))
    print(f"prompt tokens  median ms over {ROUNDS} rounds (one prompt alone, one output token)")
    for n in LENGTHS:
        print(f"{n:13d}  {1000 * statistics.median(times[n]):8.2f}")
    sys.stdout.flush()


if __name__ == "__main__":  # the engine core is a spawned process: it re-imports this file
    main()
