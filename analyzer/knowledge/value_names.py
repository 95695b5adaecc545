"""How SGLang's messages spell some values of its settings: "FlashAttention3 decode backend is not compatible with
hierarchical cache" is ``--decode-attention-backend fa3``; "TensorRT-LLM MLA only supports page_size of 32 or 64" is
``trtllm_mla``. Each spelling is read from SGLang's own messages (server_args.py and arg_groups/ of 0.5.10-0.5.23).
The value itself is no spelling here: a message that writes ``NGRAM`` beside "speculative" names the algorithm it
refuses as often as the one you gave."""

from __future__ import annotations

SPELLINGS = {
    "fa3": ("flashattention3", "flashattention 3", "flashattention v3"),
    "fa4": ("flashattention4", "flashattention 4", "flashattention v4"),
    "trtllm_mha": ("trtllm mha", "tensorrt-llm mha"),
    "trtllm_mla": ("trtllm mla", "tensorrt-llm mla"),
    "cutlass_mla": ("cutlass mla",),
    "cutedsl_mla": ("cutedsl mla",),
}


def spellings(value: str) -> tuple[str, ...]:
    """The lower-case words a message writes ``value`` with, other than the value itself (none for most values)."""
    return SPELLINGS.get(value, ())
