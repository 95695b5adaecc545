"""Values SGLang writes to a setting only on another kind of device (analyzer/commands/device_values.py), and
what ``sgtrace fix`` does with them: offered last among the trade-offs, saying so, and never as the choice near
yours that keeps a value of yours. On a miniature ServerArgs whose default backend has SGLang's shape."""

from __future__ import annotations

import pytest

from analyzer.commands.device_values import values_of_another_kind
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.commands.fix import find_fixes
from analyzer.commands.keep_fix import keep_fixes
from conftest import PREPARE_SERVER_ARGS, miniature_tree

TREE = '''
import argparse
import dataclasses
from typing import Optional

from sglang.srt.utils import is_hip


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    device: Optional[str] = None
    attention_backend: Optional[str] = None
    page_size: Optional[int] = None
    speculative_algorithm: Optional[str] = None

    def __post_init__(self):
        if self.device is None:
            self.device = "cuda"
        if self.attention_backend is None:
            if is_hip():
                self.attention_backend = "aiter"
            elif self.device == "cpu":
                self.attention_backend = "intel_amx"
            else:
                self.attention_backend = "triton"
        if self.attention_backend == "intel_xpu" and self.page_size not in (64, 128):
            self.page_size = 128
        if self.attention_backend == "trtllm_mla" and self.speculative_algorithm is not None:
            raise ValueError("trtllm_mla backend does not support speculative decoding yet.")

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--device", type=str, default=None)
        parser.add_argument("--attention-backend", type=str, default=None,
                            choices=["aiter", "triton", "trtllm_mla", "intel_xpu", "intel_amx"])
        parser.add_argument("--page-size", type=int, default=None)
        parser.add_argument("--speculative-algorithm", type=str, default=None)

''' + PREPARE_SERVER_ARGS


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return miniature_tree(tmp_path_factory.mktemp("device_values"), TREE)


def explained(tree, args: str, profile: str):
    request = ExplainRequest(sglang=str(tree), args="--model-path /m " + args, profile=profile)
    return request, explain(request)


def test_a_value_sglang_writes_only_on_another_kind_of_device_is_read_from_its_code(tree):
    _, explanation = explained(tree, "", "h100")
    assert values_of_another_kind(explanation.extraction, explanation.profile, "cuda", "attention_backend") == {
        "aiter": "is_hip()", "intel_amx": "device == 'cpu'"}
    # on an AMD GPU aiter is SGLang's own choice, and the CPU's backend is out of reach (the is_hip() branch comes
    # first); on a CPU node the CPU's backend is SGLang's choice
    _, amd = explained(tree, "", "mi300x")
    assert values_of_another_kind(amd.extraction, amd.profile, "cuda", "attention_backend") == {
        "intel_amx": "device == 'cpu'", "triton": "not is_hip()"}
    _, cpu = explained(tree, "--device cpu", "cpu")
    assert values_of_another_kind(cpu.extraction, cpu.profile, "cpu", "attention_backend") == {
        "aiter": "is_hip()", "triton": "device != 'cpu'"}


def test_a_fix_offers_a_value_of_another_kind_of_device_last_and_says_so(tree):
    # pr9238's shape: every other choice of --attention-backend resolves; aiter too, on a CUDA node, where SGLang
    # picks it only under is_hip()
    request, explanation = explained(tree, "--attention-backend trtllm_mla --speculative-algorithm EAGLE", "h100")
    report = find_fixes(request, explanation)
    changed = [[c.text() for c in t.changes] for t in report.trade_offs]
    assert changed.index(["+ --attention-backend aiter"]) > changed.index(["+ --attention-backend triton"])
    aiter = report.trade_offs[changed.index(["+ --attention-backend aiter"])]
    assert aiter.trade_off.endswith("SGLang picks aiter for --attention-backend only where is_hip(), not on this node")
    assert not any(t.elsewhere for t in report.trade_offs[:changed.index(["+ --attention-backend aiter"])])


def test_the_choice_near_yours_is_never_one_of_another_kind_of_device(tree):
    # pr32798's shape: to keep --page-size 256 on an Intel GPU the fix offered --attention-backend intel_amx, the
    # choice spelled nearest intel_xpu, which SGLang picks only on a CPU
    _, explanation = explained(tree, "--device xpu --attention-backend intel_xpu --page-size 256", "intel-max-1550")
    kept = keep_fixes(explanation)
    assert [k.field for k in kept] == ["page_size"]
    assert "intel_amx" not in (kept[0].change or "")
