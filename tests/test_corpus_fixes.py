"""The first-fix score on the corpus (analyzer/corpus_fixes.py): how an accepted fix is read and
when a proposal counts as the same."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from analyzer.commands.corpus_fixes import _same, accepted_changes

DESTS = {"--tp": "tp_size", "--tensor-parallel-size": "tp_size", "--attention-backend": "attention_backend",
         "--enable-dp-attention": "enable_dp_attention", "--max-running-requests": "max_running_requests",
         "--policy-config": "policy_config"}


def read(text: str):
    return accepted_changes(SimpleNamespace(fix=text), DESTS.get)


@pytest.mark.parametrize("text, changes", [
    ("--attention-backend triton (or flashinfer)", {("set", "attention_backend", "triton")}),
    ("drop --enable-dp-attention (or drop --speculative-adaptive)", {("drop", "enable_dp_attention", None)}),
    # the verb opening a sentence (pr11396's record): "Drop" is drop
    ("Drop --attention-backend flashinfer (SGLang then picks fa3 on an H100)", {("drop", "attention_backend", None)}),
    ("unset SGLANG_OPT_X (to keep ep_size 1)", {("env", "SGLANG_OPT_X", "")}),
    ("--tp 4 with SGLANG_ENABLE_SPEC_V2=1", {("set", "tp_size", "4"), ("env", "SGLANG_ENABLE_SPEC_V2", "1")}),
    ("none on 0.5.12 (the PR enables it)", set()),
    ("run _handle_pd_disaggregation first (SGLang-side); as flags: --tensor-parallel-size 2", {("set", "tp_size", "2")}),
    # a json value quoted for the shell is one value (pr34012's record): its quotes go, its spaces stay
    ("""e.g. --policy-config '{"threshold": 4096, "next_prompt_estimate": 512}' (the help's example)""",
     {("set", "policy_config", '{"threshold": 4096, "next_prompt_estimate": 512}')}),
])
def test_an_accepted_fix_is_read_up_to_its_first_alternative(text, changes):
    assert read(text) == frozenset(changes)


def test_a_raise_with_no_fix_that_keeps_the_launch_reads_the_workaround_after_none():
    from analyzer.commands.corpus_fixes import accepted_workaround

    def workaround(text: str):
        return accepted_workaround(SimpleNamespace(fix=text), DESTS.get)

    assert read("none on 0.5.20 (the PR adds X in 0.5.21); drop --enable-dp-attention or --tp 4") == frozenset()
    assert workaround("none on 0.5.20 (the PR adds X in 0.5.21); drop --enable-dp-attention or --tp 4") == {
        ("drop", "enable_dp_attention", None)}
    assert workaround("none for fake on 0.5.18 (the PR allows it); --attention-backend triton or fa3 passes") == {
        ("set", "attention_backend", "triton")}
    assert workaround("none on 0.5.12 (the PR enables it)") is None  # no workaround named
    assert workaround("drop --enable-dp-attention; or none") is None  # not a "none" record


def test_an_accepted_fix_that_is_no_command_line_change_is_not_scored():
    assert read("upgrade to a release with PR #30682") is None


def test_the_same_changes_match_and_others_do_not():
    tp4 = frozenset({("set", "tp_size", "4")})
    assert _same(tp4, tp4)
    assert not _same(tp4, frozenset({("set", "tp_size", "2")}))
    assert _same(tp4, frozenset({("set", "tp_size", "2")}), values=False)  # a default's wanted value is the operator's
    assert _same(frozenset({("set", "max_running_requests", "N")}), frozenset({("set", "max_running_requests", "48")}))
    assert not _same(tp4, frozenset())
    assert _same(frozenset(), frozenset()) and not _same(frozenset(), tp4)
    # unset is the declared default; a proposal may add the env the message asks for
    assert _same(frozenset({("env", "X", "")}), frozenset({("env", "X", "0")}), env_defaults={"X": False})
    assert not _same(frozenset({("env", "X", "")}), frozenset({("env", "X", "1")}), env_defaults={"X": False})
    assert _same(tp4, tp4 | {("env", "Y", "1")})
    # the tool's stand-in for the operator's own value (the field's name upper-cased) matches the record's value
    urls = frozenset({("set", "encoder_urls", "http://encoder:8000")})
    assert _same(urls, frozenset({("set", "encoder_urls", "ENCODER_URLS")}))
    assert not _same(urls, frozenset({("set", "encoder_urls", "OTHER")}))


# -- the first fix on each corpus case (fetches the release's wheel once; python -m analyzer.commands.corpus_fixes) --

from analyzer.commands import corpus  # noqa: E402
from analyzer.commands.corpus_fixes import row_of  # noqa: E402

# The cases whose first fix is not the accepted one, and why (issue 15's closing note has the account).
# Each is asserted to stay a miss: the day the tool gets one right, the test says to drop it here.
FIRST_FIX_MISSES = {
    "issue36532-sm120-gdn-flashinfer-decode-needs-bf16-state": "the second change (prefill backend) is needed by no code the engine runs",
    "pr25779-lora-disables-piecewise-cuda-graph": "the tool names the record's fix as the trade-off LoRA costs, with no change first (as the records of issue26618 and pr13075 want); this record puts the drop first",
    "pr27184-nemotron-super-mtp-radix": "0.5.12 asserts extra_buffer is not supported for NemotronH: the accepted fix raises",
    "pr29965-rocm-auto-extra-buffer-assert": "no_buffer alone raises (overlap schedule) in the engine; the tool adds --disable-overlap-schedule",
    "pr34326-megamoe-runner-alias-overrides-a2a": "keeping your deepep is leaving the alias out (the record's second); the record puts its canonical spelling first, which gives deepep up",
    "pr21780-b200-driver-595-gpt-oss-falls-back-to-triton-moe": "held-out, as it arrived: the record's answer is none (SGLang's fallback is the fix); for a default SGLang replaced the tool states another explicit choice (deep_gemm)",
    "pr38412-dsv4-eagle-topk-default-after-hook": "SGLang's own auto-choice is (3, 1, 4); the record's (2, 1, 3) is from elsewhere",
    "pr23139-gpt-oss-hicache-decode-falls-back-to-flashinfer": "held-out, as it arrived: the first fix sets the attention backend (the verdict's first cause) where the PR's is the decode backend or the HiCache I/O backend",
    "issue23490-gb300-kimi-eagle3-draft-inherits-trtllm-mla": "held-out: the tool's first fix is the draft's own backend, as the record's, with the first value of --attention-backend's choices that resolves (triton), not the reporter's trtllm_mha",
    "pr14796-csgmv-lora-target-all-drops-embed-lm-head": "held-out, as it arrived: the record's fix is the --lora-backend triton the warning advises, which keeps every module but not your literal 'all' (SGLang expands it): the tool finds no change that keeps your value and offers leaving LoRA out",
    "pr24436-gemma4-assistant-draft-rejects-eagle3": "held-out, as it arrived: 0.5.12's --speculative-algorithm choices are not literal, so no other algorithm (the record's NEXTN) is tried; the tool offers leaving speculative decoding out",
    "pr25858-pd-prefill-rejects-fake-transfer-backend": "held-out, as it arrived: with the record's mooncake, 0.5.14 validates your --disaggregation-ib-device against /sys/class/infiniband, which the b200 profile does not list: the engine assumes it missing and mooncake raises there, so the first plausible fix is nixl",
    "pr11801-deterministic-inference-forces-pytorch-sampling": "held-out, as it arrived: the record's answer is none (deterministic inference needs SGLang's pytorch sampling); for a default SGLang replaced the tool states SGLang's choice explicitly",
    "pr30620-qwen25-vl-breakable-prefill-cuda-graph-disabled": "held-out, as it arrived: the record's answer is none (SGLang disables the breakable prefill graph for this VLM on purpose); for a feature SGLang switched off the tool states the explicit choice that keeps it",
    "pr30409-pd-decode-disables-prefill-cuda-graph": "held-out, as it arrived: the record's answer is none (a decode worker runs no prefill batches); for a feature SGLang switched off the tool states the explicit choice that keeps it",
    "pr9382-tokenizer-batch-encode-vs-dynamic-batch-tokenizer": "held-out, as it arrived: the tool's first fix drops --enable-tokenizer-batch-encode, which keeps the --enable-dynamic-batch-tokenizer the record keeps; its words ('drop one of the two flags: keep ...') read as setting the flag it keeps",
    "pr23675-a100-prefill-only-disable-kv-cache-needs-fa-prefill": "held-out, as it arrived: the tool sets the prefill backend the check reads (--prefill-attention-backend fa3); the record sets --attention-backend fa3",
    "pr38510-xpu-sampling-backend-defaults-to-intel-xpu": "held-out, as it arrived: the record's answer is none (the intended XPU default); for a default SGLang replaced the tool states SGLang's choice",
    "pr19718-sm120-gpt-oss-triton-kernel-moe-rejects-ep": "held-out, as it arrived: the tool changes the MoE runner SGLang chose on SM120 (deep_gemm, which keeps your --ep-size 2); the record drops --ep-size 2",
    "pr4232-deepep-sets-ep-size-to-tp-size": "held-out, as it arrived: the record's answer is none (DeepEP runs EP over all ranks); the tool offers --moe-a2a-backend none, which keeps the ep_size",
    "pr20732-pd-decode-offload-kvcache-needs-storage-backend": "held-out, as it arrived: the tool states the first storage backend that resolves (file); the record names mooncake first and file among the others",
    "pr17953-mi355x-mori-chunked-prefill-exceeds-dispatch-tokens": "held-out, as it arrived: the record's fix is the PR's DP-attention launch (a smaller chunk per rank); the tool keeps your chunk size and offers the decode role, which skips the check",
    "issue28427-cpu-gemma4-default-intel-amx-rejected": "held-out, as it arrived: the engine verifies --attention-backend triton on the CPU profile (the Gemma4 check lists it); the record says no CPU backend works on 0.5.14 (triton has no CPU kernels there), which no check the engine runs says",
    "pr32962-eplb-without-a2a-defaults-dynamic-dispatch": "held-out, as it arrived: the record's answer is none (dynamic dispatch is the right pick without an a2a backend); for a default SGLang resolved the tool states SGLang's choice",
    "issue36840-tbo-dp-attention-reset-at-dp1": "held-out, as it arrived: the tool offers --moe-a2a-backend deepep (the EP a2a backend the message names); the record's fix is --dp-size 4, which keeps your --enable-dp-attention from being reset",
    "pr10031-hicache-page-first-direct-forces-direct-io": "held-out, as it arrived: to keep your --hicache-io-backend kernel the tool offers --hicache-mem-layout page_first (the record's second answer); the record first states the direct backend the layout requires",
    "pr15127-b200-eagle3-topk-unset-picks-trtllm-mha-then-rejects": "held-out, as it arrived: the tool changes the backend SGLang picked to the first of --attention-backend's choices that resolves (triton); the record sets the speculative parameters with topk 1, or flashinfer",
    "issue36554-hopper-eagle-auto-params-picks-fa3": "held-out, as it arrived: the tool keeps SGLang's fa3 by setting it (--attention-backend fa3); the record sets the speculative parameters before the backend is chosen, or flashinfer",
    "pr12003-b200-llama4-trtllm-mha-rejected": "held-out: as it arrived the tool's first fix was --device cpu (absurd on a B200); since the device SGLang fills in from the node is no fix, it is --attention-backend aiter, the message's first value no check of 0.5.3 refuses on a B200; the record gives triton (fa3 is Hopper's, aiter AMD's)",
    "pr14842-sm120-auto-selects-trtllm-mha-then-rejects": "held-out, as it arrived: the tool sets the first of --attention-backend's choices that resolves (triton); the record gives flashinfer, what the fixed auto-selection picks",
    "pr30756-pplx-a2a-without-dp-attention-rejected": "held-out, as it arrived: the tool offers --moe-a2a-backend none (keeping your attention layout); the record gives the PR's DP-attention launch (--dp 4 --enable-dp-attention)",
    "pr22516-context-length-clamps-piecewise-cuda-graph-max-tokens": "held-out, as it arrived: the tool offers --piecewise-cuda-graph-max-tokens 2048, stating the clamped value; the record needs no change (the clamp is the merged fix)",
    "pr4767-deepep-auto-mode-rejects-dp-attention": "held-out, as it arrived: the tool offers --deepep-mode normal alone; the record gives low_latency first (normal needs --disable-cuda-graph too)",
    "pr24054-adaptive-spec-off-for-eagle-topk-gt-1": "held-out, as it arrived: the tool proposes no change to keep --speculative-adaptive; the record sets --speculative-eagle-topk 1",
    "pr18973-ssl-certfile-without-keyfile-rejected": "held-out, as it arrived: the tool offers leaving out --ssl-certfile; the record gives --ssl-keyfile with the certificate's private key",
    "pr38439-tensor-dump-folder-disables-decode-cuda-graph": "held-out, as it arrived: the tool offers leaving out --debug-tensor-dump-output-folder; the record's answer is none on 0.5.23 (graph-mode dumps are what the open PR adds)",
    "issue29416-high-port-derives-grpc-port-out-of-range": "held-out, as it arrived: the tool proposes nothing (no input of the derived gRPC port is followed); the record lowers --port to 55535 or less",
    "pr15560-mi300x-dllm-disables-cuda-graph": "held-out, as it arrived: the tool offers leaving out --dllm-algorithm; the record's answer is none on AMD",
    "pr23557-xpu-mla-intel-xpu-prefill-rejected": "held-out (reproduced once c11f22e answered xpu_has_xmx_support): the tool offers --prefill-attention-backend triton, keeping --attention-backend intel_xpu for decode; the record states decode intel_xpu in place of --attention-backend",
    "pr32798-xpu-intel-xpu-page-size-256-becomes-128": "held-out, as it arrived: to keep your --page-size 256 the tool offered --attention-backend intel_amx (the choice spelled nearest intel_xpu, a CPU backend); it now offers dropping --attention-backend (SGLang writes intel_amx only where device == 'cpu': device_values); the record first gives a size the XPU backend supports, 128",
    "pr6408-cpu-without-amx-intel-amx-falls-back-to-torch-native": "held-out, as it arrived: the tool states the fallback SGLang picks, --attention-backend torch_native; the record says none on this host first (intel_amx needs an AMX CPU), then the same flag",
    "pr12287-ascend-piecewise-compiler-inductor-becomes-eager": "held-out, as it arrived: the tool proposes nothing (no change keeps inductor on an Ascend node); the record states eager, the value SGLang rewrites yours to",
    "pr16494-ascend-dllm-attention-backend-forced-to-ascend": "held-out, as it arrived: the tool proposes nothing (no change keeps torch_native for diffusion LLM on an NPU); the record states --attention-backend ascend, the backend SGLang forces",
    "pr23508-h100-grpc-port-equal-to-http-port": "held-out, as it arrived: the tool offers --smg-grpc-mode (a default the check reads, set, costs less than changing your port); the record gives another --grpc-port, as explain's Fix line now does (--grpc-port 30001)",
    "pr8782-b200-trtllm-mha-page-size-128-becomes-64": "held-out, as it arrived: to keep your --page-size 128 the tool offers dropping --attention-backend trtllm_mha (128-token pages with another backend); the record first gives a page size trtllm_mha keeps (16, 32 or 64)",
    "pr35292-hopper-inkling-full-prefill-graph-with-triton": "held-out, as it arrived: the tool states --disable-prefill-cuda-graph (the record's second way); the record first gives --attention-backend fa4, the backend every Inkling test pins",
    "pr32673-draft-sink-size-needs-draft-window-size": "held-out, as it arrived: the tool proposed dropping --speculative-draft-sink-size; since the integer stand-in it adds --speculative-draft-window-size SPECULATIVE_DRAFT_WINDOW_SIZE (your own value), where the record writes an example value (2048) with the sink",
    "issue12695-b200-gpt-oss-20b-auto-picks-flashinfer-mxfp4-moe": "held-out, as it arrived: the tool states --moe-runner-backend deep_gemm for the default it explains; the record states no fix (the issue is open; the reporter's workaround is another backend)",
    "pr31532-dcp-disables-breakable-prefill-cuda-graph": "held-out, as it arrived: the tool proposes --cuda-graph-backend-prefill breakable, which keeps the value by asking for it (the capture then meets the crash the PR's rule avoids); the record gives --dcp-size 1",
    "pr37134-rocm-eagle-mtp-turns-on-rejection-sampling": "held-out, as it arrived: the tool proposes SGLANG_SIMULATE_ACC_LEN=1, a benchmarking knob the rule also skips for; the record says no change is needed (the default is the PR's fix)",
    "pr40043-optimistic-prefill-off-with-buffer-only-l3": "held-out, as it arrived: the tool proposes dropping --optimistic-prefill-attempts; the record drops the storage backend for an L2 write-back cache (two changes)",
    "pr30087-npu-pd-decode-radix-cache-rejects-nextn": "held-out, as it arrived: the tool gives up --disaggregation-decode-enable-radix-cache (the record's second way); the record first drops --speculative-algorithm NEXTN",
    "pr26212-qwen3-vl-multimodal-disables-piecewise-cuda-graph": "held-out, as it arrived: the tool states --enforce-piecewise-cuda-graph, the record's own way around it; the record's accepted fix opens with none merged (the PR is open)",
    "pr32845-linear-replayssm-rejected-under-auto-extra-buffer": "held-out, as it arrived: the tool proposes --linear-attn-backend helion (resolution passes; helion is the KDA backend, which start-up as the engine runs it does not check for this GDN model); the record gives --mamba-radix-cache-strategy no_buffer, which on 0.5.18 also needs --disable-overlap-schedule",
    "pr35300-dspark-disables-mixed-chunk": "held-out, as it arrived: the tool proposes leaving out --enable-mixed-chunk; the record says none with DSpark on 0.5.18",
    "pr36261-dflash-rejects-pipeline-parallel": "held-out, as it arrived: the tool's first trade-off leaves out --speculative-algorithm; the record says none with pipeline parallelism",
    "pr10591-mooncake-storage-forces-kernel-io": "held-out, as it arrived: the tool proposes leaving out --hicache-storage-backend, which the record says is the only way on 0.5.2 but reads as none",
    "pr31959-sm120-trtllm-mha-prefill-rejected": "held-out, as it arrived: the tool states --prefill-attention-backend triton; the record first gives flashinfer for prefill with trtllm_mha for decode",
    "pr35221-dcp-hicache-rejects-dspark": "held-out, as it arrived: the tool's first trade-off is --dcp-size 1; the record says none with all three and first drops --speculative-algorithm DSPARK",
    "pr16305-dsv32-round-robin-cp-rejects-dp-attention": "held-out, as it arrived: the tool states --nsa-prefill-cp-mode in-seq-split; the record drops DP attention to keep round-robin CP",
    "pr18442-h100-fa4-prefill-forces-page-size-128": "held-out, as it arrived: the tool pins --page-size 128; the record's answer is none on 0.5.9 short of another prefill backend",
    "pr32281-dsv4-dspark-rejects-pipeline-parallelism": "held-out, as it arrived: the tool's first trade-off drops --speculative-algorithm; the record says none with DSpark and --pp-size > 1 and first drops the pipeline",
    "pr33037-kimi-linear-cuda-graphs-disable-symm-mem": "held-out, as it arrived: the tool proposes nothing; the record turns the CUDA graphs off to keep symm-mem",
    "pr34159-deterministic-tp4-disables-torch-symm-mem": "held-out, as it arrived: the tool offers leaving out --enable-torch-symm-mem; the record's answer is none while deterministic inference is on at TP > 1",
    "pr18724-h20-dllm-disables-radix-cache": "held-out, as it arrived: the tool offers leaving out --dllm-algorithm; the record opens with none on 0.5.9 short of leaving diffusion decoding (the scorer reads the none first)",
    "pr30360-minicpm-sala-dp-attention-rejected": "held-out, as it arrived: the tool proposes nothing; the record drops --enable-dp-attention for plain TP",
    "pr32229-b200-minimax-m2-nvfp4-auto-moe-becomes-trtllm-routed": "held-out, as it arrived: the tool pins another MoE runner (--moe-runner-backend deep_gemm); the record says none is needed (SGLang's choice is the intended one)",
    "pr36624-b200-command-a-plus-pins-flashinfer-trtllm-moe": "held-out, as it arrived: the tool pins another MoE runner (--moe-runner-backend deep_gemm); the record says none is needed (SGLang's choice is the intended one)",
    "issue9961-dsv3-mtp-dp-attention-disables-overlap": "held-out, as it arrived: the tool proposes nothing on 0.5.2 (no flag keeps the overlap schedule with EAGLE); the record's way is SGLANG_ENABLE_SPEC_V2=1 on a later release",
    "pr25054-b200-gemma4-nvfp4-auto-moe-becomes-flashinfer-trtllm": "held-out, as it arrived: the tool pins another MoE runner (--moe-runner-backend deep_gemm); the record says none is needed (SGLang's choice is the intended one)",
    "pr25655-h100-nemotron-nvfp4-auto-moe-becomes-marlin": "held-out, as it arrived: the tool pins another MoE runner (--moe-runner-backend deep_gemm); the record says none is needed (SGLang's choice is the intended one)",
    "pr26791-b200-gemma4-nvfp4-moe-default-attention-triton": "held-out, as it arrived: the tool pins --attention-backend triton (the value SGLang chose); the record says none is needed",
    "pr32668-sm120-gpt-oss-mxfp4-auto-moe-becomes-flashinfer-mxfp4": "held-out, as it arrived: the tool pins another MoE runner (--moe-runner-backend deep_gemm); the record says none is needed, or marlin to restore the earlier default",
    "pr33543-b200-nemotron-h-w4a16-nvfp4-experts-auto-moe-becomes-flashinfer-trtllm": "held-out, as it arrived: the tool pins another MoE runner (--moe-runner-backend deep_gemm); the record's fix is the PR (auto becomes marlin), --moe-runner-backend marlin on 0.5.17",
    "pr10183-cutlass-fp8-moe-rejects-expert-parallel": "the tool changes your --moe-runner-backend cutlass to auto (a flag of yours changed, as --ep-size 1 is, at the same cost); the record keeps cutlass with --ep-size 1 (scored 'same' until the scoring compared the record's --ep-size under the field SGLang copies it to, ep_size)",
    "pr20520-npu-quant-communications-needs-tp": "the tool drops --enable-quant-communications (the record's second way, on a single card); the record's first is --tp-size 2 (scored 'same' until the scoring compared tp_size, the field --tp-size's dest is copied to)",
    "pr8630-b200-flashinfer-cutlass-moe-rejects-hybrid-ep-tp": "the tool pins another MoE runner (--moe-runner-backend deep_gemm, the record's third way); the record's first is --ep-size 8 (scored 'same' until the scoring compared ep_size, the field --ep-size's dest is copied to)",
    "pr12065-h20-dsv32-context-parallel-rejects-two-node-tp16": "the tool drops --enable-nsa-prefill-context-parallel (a switch of yours, cheaper than another tensor-parallel size, which changes what each GPU holds); the record keeps CP at --tp 8 on one node",
    "pr13959-h200-dsv32-in-seq-split-cp-forces-bf16-kv-cache": "held-out, as it arrived: the tool proposes nothing to keep your fp8 KV cache; the record switches the CP mode (--nsa-prefill-cp-mode round-robin-split), a default the verdict does not name",
    "pr18319-mi355x-dsv32-nsa-backends-default-to-cuda-only-fa3": "held-out, as it arrived: the tool pins --kv-cache-dtype fp8_e4m3 (the value the NSA default depends on); the record pins the tilelang NSA backends",
    "pr33899-qwen3-vl-cuda-vmm-mm-transport-rejects-pipeline-parallelism": "held-out, as it arrived: the tool changes --mm-feature-transport to cpu (the flag the check is reached through); the record keeps cuda_vmm with --pp-size 1",
    "pr21491-b200-dsv3-fp8-auto-trtllm-moe-disables-shared-experts-fusion": "held-out, as it arrived: the tool proposes --moe-runner-backend deep_gemm; the record has no merged fix and, as its workaround, any MoE runner other than flashinfer_trtllm (no value the scorer can compare)",
    "pr13881-cpu-torch-compile-graph-max-bs-capped-by-torch-compile-max-bs": "held-out, as it arrived: the tool proposes nothing (the record sets the CPU graph sizes with --cuda-graph-bs or --torch-compile-max-bs 64); since the copied setting is tried with your value, it proposes --torch-compile-max-bs 64, the record's second way",
    "pr21601-h100-nvfp4-kv-cache-needs-blackwell": "held-out, as it arrived: the tool proposes --kv-cache-dtype auto (the record: fp4_mx_block16 or fp8_e4m3, an FP4/FP8 cache Hopper supports)",
    "pr30164-elastic-ep-scale-up-rejects-default-decode-cuda-graph": "held-out, as it arrived: the tool drops --max-ep-size and --elastic-ep-initial-size (the record disables the decode and prefill CUDA graphs)",
    "issue39499-dllm-llada2-disables-overlap-schedule": "held-out, scored once the engine read 0.5.23's dLLM registry (it did not reproduce as it arrived): the record's answer is none in released versions (dLLM serving runs without the overlap scheduler); the tool offers leaving out --dllm-algorithm",
    "pr35634-h200-dsv3-deepep-v2-default-decode-graph-exceeds-dispatch-cap": "held-out, as it arrived: the tool proposed + --moe-a2a-backend mooncake; since the message-numbers rule SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK=512 (the message's own first remedy), where the record gives --cuda-graph-max-bs-decode 128 first",
    "pr32383-h100-embeddinggemma-chunked-prefill-forced-off": "held-out, as it arrived: the tool states --chunked-prefill-size -1 (the value SGLang forces), where the record says none (EmbeddingGemma always runs without chunked prefill)",
    "pr37261-h200-dsv3-two-node-deepep-v2-default-direct-mode-rejected": "held-out, as it arrived: the tool proposes + --moe-a2a-backend none; --deepep-v2-mode hybrid, the record's fix, avoids this raise and meets the DeepEP v2 dispatch budget next (the engine: chunked_prefill_size 8192 over the default capacity)",
    "pr19498-mi300x-mori-ep-unset-deepep-mode-becomes-normal": "held-out, as it arrived: the tool states --deepep-mode low_latency (another choice, kept), where the record says none needed (an explicit --deepep-mode is honoured; normal is the intended default under MoRI)",
    "pr11702-h100-qwen3-vl-fp8-ep-size-not-dividing-tp-rejected": "held-out, as it arrived: the tool changes your --tp-size to 7 (the check's other operand); the record sets --ep-size 8, the divisor",
    "pr26346-mooncake-tcp-drops-disaggregation-ib-device": "held-out, as it arrived: the record's answer is none (the IB device means nothing over TCP); the tool keeps your device with another transfer backend (nixl)",
    "pr27700-dllm-pp2-silently-reset-to-pp1": "held-out, as it arrived: the record's answer is none (dLLM serving runs without PP); the tool keeps your --pp-size by leaving out --dllm-algorithm",
    "pr28403-mi300x-dsv3-pd-role-switch-rejects-expert-parallel": "held-out, as it arrived: the tool leaves out --enable-pd-role-switch (the flag the message names); the record drops --ep-size to keep the role switch",
    "pr30185-h200-dsv3-dp-attention-reclamps-prefill-graph-max-bs": "held-out, as it arrived: the record's answer is none (the clamp is intended); the tool states --cuda-graph-max-bs-prefill 1024, SGLang's own value",
    "pr30272-sm120-dsv4-flash-auto-moe-becomes-flashinfer-mxfp4": "held-out, as it arrived: the record's answer is none (the intended SM120 default); for a default SGLang replaced the tool states another explicit choice (deep_gemm)",
    "pr33554-rtx-pro-6000-nemotron-h-mtp-attention-backend-becomes-triton": "held-out, as it arrived: the record's answer is none (the PR's intended default); the tool states --attention-backend triton, SGLang's own pick",
    "pr34337-gemma4-lora-nextn-assistant-promoted-frozen-kv-mtp": "held-out, as it arrived: the record's answer is none (LoRA refuses FROZEN_KV_MTP); the tool's first trade-off states another --speculative-algorithm",
    "pr34844-b200-dsv4-dspark-megamoe-compact-ragged-verify-rejected": "held-out, as it arrived: the launch as recorded has no --speculative-draft-model-path; with SGLANG_RAGGED_VERIFY_MODE=static (the record's fix) DSpark raises next for it, and the tool offers leaving out --speculative-algorithm",
    "pr39790-mi355x-glm52-rocm-auto-enables-aiter-allreduce-fusion": "held-out, as it arrived: the record's answer is none (the fusion is meant for decode); the tool keeps the default with --enable-dp-attention, which skips the rule",
    "pr8678-h20-qwen3-235b-fp8-cutlass-moe-env-needs-quantization-flag": "held-out, as it arrived: the tool adds --quantization fp8 (what the assertion asks, the record's way to keep the env var); the record first drops the deprecated env var for --moe-runner-backend cutlass",
    "pr22003-qwen3-moe-attn-cp-with-unequal-moe-dp-rejected": "held-out, as it arrived: the tool sets --moe-dp-size 1 alone (it resolves); the record adds --ep-size 8 with it, the PR's 'After' layout",
    "pr22342-mi300x-qwen3-dflash-draft-backend-falls-back-to-triton": "held-out, as it arrived: the record's answer is none on ROCm (triton is where the DFLASH draft runs); for a default SGLang replaced the tool states it (--speculative-draft-attention-backend triton, the record's second way)",
    "pr23553-h100-qwen3-dflash-window-below-inferred-block-size": "held-out, as it arrived: the tool sets --speculative-num-draft-tokens 8 (the block size SGLang took from the draft's config, which the message names); the record raises your window to the draft's block size",
    "pr30283-ascend-dllm-npu-default-page-size-capped-to-block-size": "held-out, as it arrived: the record's answer is none (the cap is the intended NPU/dLLM constraint); for a default SGLang replaced the tool states --page-size 32, the record's second way",
    "pr14201-h200-dsv3-decrease-prefill-idle-env-enables-prefill-delayer": "held-out, as it arrived: the tool sets the legacy env var to 0; the record moves to --enable-prefill-delayer and unsets the env var",
    "pr22669-b200-flashinfer-a2a-cutedsl-without-dp-attention": "held-out, as it arrived: the tool changes --moe-a2a-backend to deepep (one change that resolves); the record adds DP attention with --dp 4, two changes the check asks for together (each alone still raises)",
    "pr38080-b200-qwen35-megamoe-default-chunked-prefill-exceeds-token-cap": "held-out, as it arrived: the tool raises the MegaMoE per-rank cap env var to the chunk SGLang chose (the record's second way); the record bounds --chunked-prefill-size to 8192 first (explain's Fix line gives both)",
    "pr11061-h200-dsv32-dsa-page-size-forced-to-64-on-cuda": "held-out, as it arrived: the record's answer is none (SGLang sets 64 for DSA on CUDA); for a default SGLang replaced the tool states --page-size 64",
    "pr15207-h200-mimo-v2-flash-hicache-resets-swa-full-tokens-ratio": "held-out, as it arrived: the tool proposes leaving out --swa-full-tokens-ratio; the record's answer is none in the PR, then drops --enable-hierarchical-cache to keep the ratio",
    "pr28185-h20-qwen35-int8-mamba-checkpoint-rejects-hicache": "held-out, as it arrived: the tool drops --enable-int8-mamba-checkpoint (the record's second way); the record drops --enable-hierarchical-cache first (explain's Fix line offers that trade-off)",
    "pr8345-h200-dsv3-eplb-sets-expert-distribution-recorder-mode": "held-out, as it arrived: the record's answer is none (dynamic EPLB needs the stat recorder); for a default SGLang resolved the tool states --expert-distribution-recorder-mode stat",
    "pr10169-h200-dsv3-pd-decode-dp8-needs-prefill-round-robin-balance": "held-out, as it arrived: the tool adds --prefill-round-robin-balance to this decode server (what the message asks of it); the record also launches the prefill server with --load-balance-method round_robin, a flag of another process",
    "pr12214-ascend-hicache-page-first-layout-becomes-page-first-direct": "held-out, as it arrived: the record's answer is none on Ascend (SGLang's NPU defaults rewrite HiCache); the tool proposes leaving out --hicache-mem-layout",
    "pr28151-kimi-linear-page-size-64-auto-no-buffer-rejected": "held-out, as it arrived: the tool sets --page-size 1 (explain's Fix line: without --page-size); the record's 'leave --page-size unset' is read as no change the scorer knows",
    "pr8638-b200-dsv3-default-trtllm-mla-rejects-fp8-e5m2-kv": "held-out, as it arrived: the tool names another MLA backend (flashmla) to keep your fp8_e5m2, the record's second way; the record's first is --kv-cache-dtype fp8_e4m3 (explain's Fix line gives it)",
    "pr14867-arm64-cpu-default-attention-torch-native": "held-out, as it arrived: the record's answer is none (torch_native is the Arm64 CPU backend); for a default SGLang replaced the tool states it, --attention-backend torch_native (the record's second way)",
    "pr16331-mi300x-piecewise-cuda-graph-default-disabled-on-rocm": "held-out, as it arrived: the record's answer is none for production on 0.5.10; the tool offers --enforce-piecewise-cuda-graph, which the record names as the testing-only way",
    "pr2412-h100-llama32-vision-chunked-prefill-turned-off": "held-out, as it arrived: the record's answer is none for Mllama on 0.5.16; for a feature SGLang switched off the tool states the value SGLang forces (--chunked-prefill-size -1)",
    "pr23112-sm120-trtllm-mha-fmha-v2-prefill-rejects-fp8-kv": "held-out, as it arrived: the tool changes the prefill backend the SM120 rule reads (--prefill-attention-backend triton, keeping your fp8 KV cache); the record drops --kv-cache-dtype fp8_e4m3 to keep trtllm_mha prefill",
    "pr26639-mi355x-dsv4-hisparse-rejects-unified-kv-env": "held-out, as it arrived: the tool leaves out --enable-hisparse; the record sets your SGLANG_HACK_FLASHMLA_BACKEND to triton, a value of yours changed that weighs what a flag of yours does",
    "pr28354-b200-dsr1-fp4-per-token-activation-env-rejects-deepep-cutedsl": "held-out, as it arrived: the tool takes the value SGLang's message names (--moe-a2a-backend none); the record unsets the env var to keep DeepEP",
    "pr34608-load-publish-endpoint-needs-active-kv-events-publisher": "held-out, as it arrived: the tool leaves out --load-publish-endpoint; the record names the publisher inside the --kv-events-config JSON, a value no condition names",
    "pr35120-b200-dsr1-fp4-cutedsl-w4a16-rejects-nvfp4-dispatch-env": "held-out, as it arrived: unsetting SGLANG_MOE_NVFP4_DISPATCH (the record's fix) meets the next check in the engine (the CuTe DSL A2A token budget, SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK unset); the tool's first is --moe-a2a-backend none",
    "pr36631-pd-removed-sampling-mask-env-rejected": "held-out, as it arrived: the tool unsets the env var (the record's first step); the record also passes --sampling-mask-max-tokens and SGLANG_ENABLE_DISAGG_SAMPLING_MASK=1 to keep sampling masks",
    "pr36844-gb200-dspark-dp-attention-without-dp-lm-head-rejected": "held-out, as it arrived: --enable-dp-lm-head (the record's fix) meets the next check in the engine (DSpark needs --speculative-draft-model-path, your own path); the tool's first resolving change drops --speculative-algorithm",
    "issue40286-gb10-glm53-flash-fp8-kv-dsa-backends-default-to-sm100-trtllm": "held-out, as it arrived: the record's answer is none (an open issue, no maintainer reply); the tool states the --dsa-decode-backend SGLang chose",
    "pr10937-b200-fa4-as-attention-backend-rejected-prefill-only": "held-out, as it arrived: the tool's first is another --attention-backend (triton); the record moves fa4 to --prefill-attention-backend, as the message asks",
    "pr19290-h20-dsv3-waterfill-reenables-shared-experts-fusion": "held-out, as it arrived: the record's answer is none while Waterfill is on (leave out --enable-deepep-waterfill to keep the fusion off); the tool leaves out --disable-shared-experts-fusion",
    "pr8632-h200-dsv3-trtllm-mla-needs-sm100": "held-out, as it arrived: the tool's first is another --attention-backend (aiter: 0.5.0rc0's resolution writes no backend under is_hip, so nothing marks it as AMD's); the record leaves the flag out on Hopper (the Fix line's trade-off)",
    "pr9028-h100-gpt-oss-flashinfer-attention-rejected": "held-out, as it arrived: the tool's first is another backend the model allows (triton); the record leaves the flag out (SGLang picks fa3 on Hopper; the Fix line's trade-off)",
    "pr30540-h20-hpc-ops-attention-forces-page-size-64": "held-out: the tool states --page-size 64; the record's fix also restates the --attention-backend hpc_ops the launch already has, which the comparison reads as a second change",
    "pr35272-mi300x-mxfp8-triton-moe-overridden-to-flashinfer-trtllm": "since 5ba0f36 (a write's local carries its conditions): the tool leaves out --moe-runner-backend, which SGLang overrides anyway (and keeps triton with --quantization fp8, a trade-off); the record's answer is none on 0.5.18",
    "pr8215-remote-instance-load-format-falls-back-to-auto": "held-out, as it arrived: the tool proposes nothing to keep --load-format remote_instance (the group ports, a JSON list, are offered no value); the record gives the ports",
    "issue2808-multinode-dp-attention-rejected": "held-out, as it arrived: the tool offers --nnodes 1 (the assertion reads it); the record drops --enable-dp-attention to keep both nodes",
    "issue3750-dp-attention-forces-dp-equal-tp": "held-out, as it arrived: the record's answer is none (with DP attention the DP size is the TP size on 0.4.0); the tool offers leaving out --enable-dp-attention, which keeps your --dp-size",
    "pr12912-served-model-name-colon-rejected": "held-out, as it arrived: the tool offers leaving out --served-model-name; the record renames it without the colon, a value no condition names",
    "pr5390-b200-cutlass-mla-forces-page-size-128": "held-out, as it arrived: the record's answer is none (cutlass_mla always takes 128-token pages on 0.4.9); the tool offers leaving out --attention-backend, which keeps your --page-size 64",
    "pr7722-ascend-attention-forces-page-size-128": "held-out, as it arrived: the record's answer is none (the ascend backend takes 128-token pages on 0.4.9); the tool offers leaving out --attention-backend, which keeps your --page-size 16",
    "pr27350-b200-waterfill-rewrites-megamoe-to-deepep": "held-out, as it arrived: the tool leaves out your --moe-a2a-backend megamoe (SGLang runs deepep whatever), and names dropping --enable-deepep-waterfill as the trade-off that keeps it; the record puts that trade-off first",
}
SCORED = [c for c in corpus.load_cases(corpus.CASE_DIR) if c.reproduces]


@pytest.mark.network
@pytest.mark.parametrize("case", SCORED, ids=lambda c: c.slug)
def test_the_first_fix_is_the_accepted_one(case):
    row = row_of(case)
    if row is None or row.match is None:
        pytest.skip(f"{case.slug}: not reproduced, or its accepted fix is no command-line change")
    if case.slug in FIRST_FIX_MISSES:
        assert not row.match, f"{case.slug}: the first fix is now the accepted one; drop it from FIRST_FIX_MISSES"
    else:
        assert row.match, f"{case.slug}: proposed {row.proposed_text!r}, accepted {case.fix!r}"


@pytest.mark.network
def test_a_proposal_that_resolves_like_the_accepted_fix_counts_as_the_same():
    # Qwen3-Next on B200: leaving --attention-backend out gives SGLang's own triton, the backend the PR names
    by_slug = {c.slug: c for c in SCORED}
    row = row_of(by_slug["pr14560-qwen3next-trtllm-mha-radix-disabled"])
    assert row.match and row.equivalent and row.proposed == frozenset({("drop", "attention_backend", None)})
    # another backend that keeps the page size is not the one the reporter wanted: not the same resolution
    from analyzer.commands.corpus import reproduced
    from analyzer.commands.corpus_fixes import same_resolution

    case = by_slug["issue39515-b200-nextn-page-size-triton"]
    explanation = reproduced(case)
    assert not same_resolution(case, explanation, frozenset({("set", "attention_backend", "trtllm_mha")}),
                               frozenset({("set", "attention_backend", "torch_native")}))
    assert same_resolution(case, explanation, frozenset({("set", "attention_backend", "trtllm_mha")}),
                           frozenset({("set", "attention_backend", "trtllm_mha")}))


@pytest.mark.network
def test_a_fix_line_that_gives_up_a_flag_matches_a_record_of_none_with_that_workaround():
    # "none: drop --enable-two-batch-overlap; PR #38007 ... is open": explain's line offers no fix that keeps your
    # flags, and its trade-off is the record's workaround
    import dataclasses

    from analyzer.commands.corpus import reproduced
    from analyzer.commands.corpus_fixes import verdict_fix_match

    case = next(c for c in SCORED if c.slug == "pr38007-glm52-tbo-rejects-dsa-index-topk-sharing")
    explanation = reproduced(case)

    def flag_dest(option: str):
        flag = explanation.extraction.flag_for(option)
        return flag.dest if flag is not None else None

    match, text = verdict_fix_match(case, explanation, frozenset(), flag_dest)
    assert (match, text) == (True, "trade-off: without --enable-two-batch-overlap")
    # another workaround in the record is not that line's answer
    other = dataclasses.replace(case, fix="none on this release; --attention-backend triton")
    assert verdict_fix_match(other, explanation, frozenset(), flag_dest) == (False, text)
    # a record that names a change is read as before: the trade-off is not it
    assert verdict_fix_match(case, explanation, frozenset({("set", "attention_backend", "triton")}), flag_dest)[0] is False
