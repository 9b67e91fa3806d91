"""The servers and loads of the observe live tests and of the fixtures recorded from them
(tools/record_observe_fixtures.py): one definition, so a fresh live run and a recording mean the same thing."""
from __future__ import annotations

COMMON = ["--max-num-seqs", "16", "--max-num-batched-tokens", "512", "--no-enable-prefix-caching",
          "--skip-tokenizer-init", "--max-model-len", "2048"]
# 24 blocks of 128 tokens (the CPU backend's block size) for up to 16 requests of 100-700 prompt tokens.
CONSTRAINED = ["--num-gpu-blocks-override", "24", *COMMON]
# The CPU backend's default KV cache (VLLM_CPU_KVCACHE_SPACE=1 GiB: 8,192 blocks for the tiny model).
LIGHT = COMMON
SETTINGS = {"max_num_seqs": 16, "max_num_batched_tokens": 512}

# One burst's preemptions vary with the order its requests arrive in (9 to 15 for the same 80 lengths; five
# bursts: 45 to 65 over four runs): eight bursts make the total steady enough for the 30% check.
BURSTS = {"seed": 11, "bursts": 8, "count": 80, "prompt": (100, 700), "output": (16, 128), "pause_s": 3.0}
PACED = {"seed": 12, "count": 12, "prompt": (100, 400), "output": (16, 32), "gap_s": 1.0}

# The server of issue 27 as a new user ran it: the CPU default KV cache (VLLM_CPU_KVCACHE_SPACE=1), the tiny
# model under a served name, loaded by `vllm bench serve` (the random dataset needs the tokenizer, so no
# --skip-tokenizer-init). A saturated burst (96 requests at once, six times max_num_seqs) and an idle one
# (8 at once, never more than max_num_seqs), each scraped every second between an idle scrape before and after.
SERVED_NAME = "tiny"
BENCH_SERVER = ["--max-num-seqs", "16", "--max-num-batched-tokens", "512", "--served-model-name", SERVED_NAME,
                "--no-enable-prefix-caching", "--max-model-len", "2048"]
BENCH_BURSTS = {
    "saturated": ["--dataset-name", "random", "--random-input-len", "256", "--random-output-len", "128",
                  "--num-prompts", "96", "--ignore-eos", "--seed", "0", "--temperature", "0"],
    "idle": ["--dataset-name", "random", "--random-input-len", "256", "--random-output-len", "32",
             "--num-prompts", "8", "--ignore-eos", "--seed", "1", "--temperature", "0"],
}

# The same server with its KV cache cut to 24 blocks of 128 tokens (3,072 tokens): 16 requests of 256 + 128
# tokens need 48, so admission waits for blocks and running requests are preempted. One burst of 96 at once.
BENCH_KV_SERVER = ["--num-gpu-blocks-override", "24", *BENCH_SERVER]
BENCH_KV_BURSTS = {"kv": BENCH_BURSTS["saturated"]}
# Each bench recording (tools/record_observe_fixtures.py <case>): its server's flags and its bursts.
BENCH_CASES = {"bench": (BENCH_SERVER, BENCH_BURSTS), "bench-kv": (BENCH_KV_SERVER, BENCH_KV_BURSTS)}
