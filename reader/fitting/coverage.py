"""What the fitted loads can tell apart, and what they cannot: a warning for each gap in the bench set.

A first token costs the front end's time, a prefill step's fixed cost and a cost per prompt token. One
request at a time at a single prompt length measures only their sum; a second length at least twice
the first splits the per-token part from the rest, and loaded runs alone cannot, because queueing moves
their TTFTs as much as the split does. Without it the fit picks a split that matches the fitted loads
and misses other prompt lengths: on the shipped CPU recordings (fixtures/calibration/cpu-tiny-llama) a
fit whose only one-at-a-time load had 256-token prompts predicted a 1,024-token prompt alone 55% slow,
and held-out TTFT P50 came to 25% off; with a 1,024-token one-at-a-time load among the fitted ones, 11%.

Likewise, results that all ran one request at a time say nothing about what batching costs per request.

A server that caches prefixes (vLLM's default) keeps the prompts of one run for the next. `vllm bench serve`'s random
dataset draws the same prompts for the same --seed (0 unless given) and lengths, so a run that repeats another's
meets its prompts' leading blocks cached: on the CPU saturation deployment a second run of 16 256-token prompts hit
2,048 of its 4,096 prompt tokens. The results do not record the seed, so runs that sent the same prompt lengths in
the same order are the sign, and the warning says what to change. (The reset it names: POST /reset_prefix_cache,
served only when the server runs with VLLM_SERVER_DEV_MODE=1; vllm/entrypoints/serve/dev/cache/api_router.py and
vllm/entrypoints/launchers/api_server/routers.py @ v0.32.0.)

The front end's cost per streamed token shows only where it sets the pace: a server kept full (a closed
loop of max_num_seqs clients or more, or an open loop sending more than the server delivered). Below that
the engine's steps take longer than the front end's work on their tokens, and any cost per token fits.

A closed loop keeps the server full but never sends faster than it delivers: each client waits for its last
token before it sends again, so no backlog forms and the front end never takes requests in while it streams
at full pace. An open loop past the knee does both, and its TTFT P50 follows the throughput several times
over as the backlog grows. On the CPU saturation deployment (fixtures/calibration/cpu-tiny-saturation) a fit
whose only full load was 32 clients in a closed loop predicted held-out 30 requests/s of 256-token outputs
-4.8% in throughput and +30% in TTFT P50; with 45 requests/s among the fitted loads, -1.5% and +16%.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

PROMPT_RATIO = 2.0  # prompt lengths this far apart split the per-token cost from the fixed one
OVERSENT = 1.2  # an open loop asking this much more output per second than it got kept the server full
OPEN_LOOP_PAST = 1.5  # the open-loop rate the warning suggests, over the closed loop's delivered requests/s


def coverage_warnings(fitted: Sequence[Any]) -> list[str]:
    """One sentence per gap in the fitted results (not the held-out ones: they inform nothing)."""
    alone = sorted({round(r.mean_prompt_tokens) for r in fitted if r.max_concurrency == 1})
    out = []
    if not alone or alone[-1] < PROMPT_RATIO * alone[0]:
        have = f"only at {', '.join(str(n) for n in alone)}-token prompts" if alone else "none at all"
        add = (f"a run with `--max-concurrency 1` at a second length, e.g. `--random-input-len {4 * alone[-1]}`"
               if alone else "runs with `--max-concurrency 1` at two lengths, e.g. `--random-input-len 256` and "
               "`--random-input-len 1024`")
        out.append(f"No fitted result ran one request at a time at two prompt lengths at least {PROMPT_RATIO:g}x "
                   f"apart ({have}), so the fit cannot tell a prefill's fixed cost from its cost per prompt "
                   f"token and TTFT at other prompt lengths may be far off: add {add}.")
    if fitted and all(r.max_concurrency == 1 for r in fitted):
        out.append("Every fitted result ran one request at a time, so the fit cannot see what batching costs per "
                   "request: throughput and latency under load are extrapolated. Add a run at the concurrency "
                   "or request rate you expect in production.")
    return out


def saturating(result: Any, max_num_seqs: int) -> bool:
    """The run kept the server full: its clients alone filled every sequence slot, or it sent requests for
    OVERSENT times the tokens per second the server delivered."""
    if result.max_concurrency is not None:
        return result.max_concurrency >= max_num_seqs
    asked = result.request_rate * result.total_output_tokens / max(result.completed, 1)
    delivered = result.metrics.get("output_throughput") or 0.0
    return delivered > 0 and asked >= OVERSENT * delivered


def front_end_warnings(fitted: Sequence[Any], max_num_seqs: int) -> list[str]:
    """A sentence when no fitted result kept the server full: the front end's cost per streamed token is then
    left at the base profile's value."""
    if any(saturating(r, max_num_seqs) for r in fitted):
        return []
    return [f"No fitted result kept the server full ({max_num_seqs} or more clients in a closed loop, or an open "
            "loop sending faster than the server delivered), so the front end's cost per streamed token "
            "(front_end_token_s) cannot be told from the engine's and is not fitted: throughput at saturation may "
            f"be predicted high. Add a run such as `--max-concurrency {max_num_seqs}` with long outputs."]


def open_loop_warnings(fitted: Sequence[Any], max_num_seqs: int) -> list[str]:
    """A sentence when the fitted results kept the server full only in closed loops: none sent requests faster
    than the server delivered them, so none showed a backlog growing while the front end streams."""
    full = [r for r in fitted if saturating(r, max_num_seqs)]
    if not full or any(r.max_concurrency is None for r in full):
        return []
    delivered = max((r.completed / r.duration_s for r in full if r.duration_s > 0), default=0.0)
    rate = f"`--request-rate {math.ceil(OPEN_LOOP_PAST * delivered)}`" if delivered else "a `--request-rate` above it"
    return [f"The fitted results kept the server full only in closed loops (e.g. {Path(full[0].path).name}), which "
            "never send faster than the server delivers, so the fit has not seen a backlog grow while the front end "
            "streams: TTFT of open loops past the server's limit may be far off (it follows the throughput several "
            f"times over). Add an open-loop run past it: the closed loop delivered {delivered:.1f} requests/s, so e.g. "
            f"{rate} with the same lengths."]


def repeated_prompt_warnings(results: Sequence[Any], prefix_caching: bool) -> list[str]:
    """A sentence when the server cached prefixes and two or more results sent the same prompt lengths in the
    same order (the same random-dataset prompts if they shared a --seed), fitted and held-out results alike."""
    if not prefix_caching:
        return []
    by_lengths: dict[tuple, list[str]] = {}
    for r in results:
        if r.input_lens:
            by_lengths.setdefault(tuple(r.input_lens), []).append("/".join(Path(r.path).parts[-2:]))
    repeats = [labels for labels in by_lengths.values() if len(labels) > 1]
    if not repeats:
        return []
    example = " and ".join(repeats[0][:2])
    return [f"Prefix caching is on and {sum(len(x) for x in repeats)} results sent the same prompt lengths in the "
            f"same order as another (e.g. {example}): if they ran `vllm bench serve`'s random dataset under one "
            "--seed (0 unless given), they sent the same prompts, and each run after the first found its prompts' "
            "leading blocks cached by the one before, so its TTFT and throughput read better than its replay "
            "predicts. Give each run its own --seed, or empty the cache before each run (POST /reset_prefix_cache "
            "on a server started with VLLM_SERVER_DEV_MODE=1)."]
