"""Token-budget arithmetic of the V1 scheduler (shared/reference/vllm/scheduler-v1.md @ v0.18.0).

Each step the scheduler spends at most `max_num_batched_tokens` (the budget) over at most
`max_num_seqs` running requests: running requests first (a decode costs 1 token, 1 + k with k
draft tokens), then waiting prompts take what is left, chunked when chunked prefill is on.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..errors import ReaderError


def decode_seats(mnbt: int, max_num_seqs: int, spec_tokens: int = 0) -> int:
    """Requests that can decode in one step: each costs 1 + spec_tokens tokens of the budget."""
    _check(mnbt, max_num_seqs)
    return min(max_num_seqs, mnbt // (1 + spec_tokens))


def prefill_chunks(prompt_len: int, mnbt: int, running_decodes: int = 0, chunked: bool = True,
                   long_prefill_threshold: int = 0) -> list[int]:
    """Chunk sizes a prompt is computed in, step by step, when `running_decodes` requests take
    one token each per step first. Without chunked prefill the whole prompt must fit the budget
    left over in one step (else it waits; vLLM requires max_model_len <= budget then)."""
    if prompt_len <= 0:
        return []
    left = mnbt - running_decodes
    if left <= 0:
        raise ReaderError(f"{running_decodes} decodes use the whole budget of {mnbt} tokens", key="max_num_batched_tokens")
    if not chunked:
        if prompt_len > left:
            raise ReaderError(f"prompt of {prompt_len} tokens exceeds the {left} tokens left in the budget "
                              "and chunked prefill is off", key="enable_chunked_prefill")
        return [prompt_len]
    cap = min(left, long_prefill_threshold) if long_prefill_threshold > 0 else left
    full, rest = divmod(prompt_len, cap)
    return [cap] * full + ([rest] if rest else [])


def steps_to_first_token(prompt_len: int, mnbt: int, running_decodes: int = 0, **kw) -> int:
    """The first token is sampled in the step that computes the prompt's last chunk."""
    return len(prefill_chunks(prompt_len, mnbt, running_decodes, **kw))


def n_max(num_blocks: int, block_size: int, mean_context: float) -> float:
    """Requests the KV cache holds at a mean context: N_max ~ blocks x block_size / mean context
    (each request also rounds up to whole blocks: blocks / ceil(context / block_size) is the
    paged bound; the first is the headline figure)."""
    if mean_context <= 0:
        raise ReaderError("mean context must be > 0", key="workload")
    return num_blocks * block_size / mean_context


class PromptRow(BaseModel):
    model_config = ConfigDict(frozen=True)
    prompt_len: int
    chunks: list[int]
    steps_to_first_token: int


class BudgetReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_num_batched_tokens: int
    max_num_seqs: int
    running_decodes: int
    decode_seats: int
    prefill_tokens_per_step: int  # budget left for prompts after the running decodes
    step_tokens: int  # tokens in a full step (decodes + prefill), what sets its length
    prompts: list[PromptRow]
    n_max_mean: float | None = None
    n_max_p99: float | None = None
    how: str


def budget_report(mnbt: int, max_num_seqs: int, running_decodes: int, prompt_lens: list[int],
                  num_blocks: int | None = None, block_size: int = 16, mean_context: float | None = None,
                  p99_context: float | None = None, spec_tokens: int = 0) -> BudgetReport:
    seats = decode_seats(mnbt, max_num_seqs, spec_tokens)  # checks the budget and max_num_seqs
    d = min(running_decodes, seats)
    decode_cost = d * (1 + spec_tokens)
    rows = [PromptRow(prompt_len=p, chunks=(c := prefill_chunks(p, mnbt, decode_cost)), steps_to_first_token=len(c))
            for p in prompt_lens]
    nm = n_max(num_blocks, block_size, mean_context) if num_blocks and mean_context else None
    n99 = n_max(num_blocks, block_size, p99_context) if num_blocks and p99_context else None
    how = (f"decode seats = min(max_num_seqs {max_num_seqs}, budget {mnbt} // {1 + spec_tokens}) = {seats}; "
           f"with {d} decodes a step has {mnbt - decode_cost} prompt tokens left; "
           "chunks = ceil(prompt / left); N_max = blocks x block_size / mean context")
    return BudgetReport(max_num_batched_tokens=mnbt, max_num_seqs=max_num_seqs, running_decodes=d,
                        decode_seats=seats, prefill_tokens_per_step=mnbt - decode_cost, step_tokens=mnbt,
                        prompts=rows, n_max_mean=nm, n_max_p99=n99, how=how)


def _check(mnbt: int, max_num_seqs: int) -> None:
    if mnbt <= 0:
        raise ReaderError("max_num_batched_tokens must be > 0", key="max_num_batched_tokens")
    if max_num_seqs <= 0:
        raise ReaderError("max_num_seqs must be > 0", key="max_num_seqs")
