"""A condition's text read with Python's ``ast`` (``extract.text_reads``) reads what libcst's reader
(``extract.reads.reads_of``, the extraction's) reads for the same text with the record's receivers as its
scope: the same fields, env vars, probes and model attributes, in the same order."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from analyzer.contracts.extraction import Reads
from analyzer.extract.reads import ReadScope, reads_of
from analyzer.extract.text_reads import reads_of_text
from analyzer.knowledge.receivers import RECEIVERS
from analyzer.symbolic.source_text import source_text


def libcst_reads(text: str) -> Reads:
    try:
        node = cst.parse_expression(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return Reads()
    return reads_of(node, ReadScope(receivers=set(RECEIVERS), field_names=set()))


TEXTS = [
    "self.tp_size > 1 and is_hopper_with_cuda_12_3() and envs.SGLANG_X.get()",
    "server_args.speculative_algorithm is not None and self.enable_mamba_extra_buffer()",
    "getattr(server_args, 'enable_dp_attention', False) or cfg.dp_size > 1",
    "os.environ.get('SGLANG_A') == '1' or 'SGLANG_B' in os.environ or os.environ['SGLANG_C']",
    "get_bool_env_var('SGLANG_D') and get_int_env_var(name='SGLANG_E') > 2",
    "torch.cuda.is_available() and torch.version.hip is None and torch.backends.cudnn.enabled",
    "get_platform().is_sm100 or current_platform.is_hopper()",
    "self.get_model_config().is_multimodal and hf_config.text_config.layer_types[0] == 'full'",
    "model_config_of(view).hf_config.architectures[0] in ['DeepseekV3ForCausalLM']",
    "self.x if self.a else self.b",
    "{'a': self.va, self.kb: hf_text_config, **self.rest}",
    "f(hf_config=self.x, *rest, **more)",
    "f(hf_config=text_config, model_config=self.y)",
    "g(self.p, key=self.q, *self.r)",
    "obj.model_config.num_layers > 4",
    "self.helper(model_config=y, other=self.z)",
    "any((m.text_config for m in self.models if m.enabled))",
    "(lambda model_config: model_config.x)(self.y)",
    "f'{self.a}' != 'SGLANG_' + envs.SGLANG_F.name",
    "is_cuda() and not is_npu() and get_device_capability()[0] >= 9",
    "for x in self.items",
    "",
    "self.a[1:2] and os.environ[key]",
    "(os.environ['A'] if self.x else\n torch.cuda.is_available(\n    current_platform.device)) or os.environ[\n  k + 'é']",
]


@pytest.mark.parametrize("text", TEXTS)
def test_written_texts_read_the_same(text):
    assert reads_of_text(text) == libcst_reads(text)


def test_what_a_text_reads():
    reads = reads_of_text("self.tp_size > 1 and is_hopper_with_cuda_12_3() and envs.SGLANG_X.get()")
    assert (reads.fields, reads.env, reads.probes, reads.model) == (["tp_size"], ["SGLANG_X"], ["is_hopper_with_cuda_12_3()"], [])
    assert reads_of_text("obj.model_config.num_layers > 4").model == ["model_config"]  # an attribute's name, as libcst's Name
    assert reads_of_text("for x in self.items").is_empty()
    assert reads_of_text("(" * 5000 + "x" + ")" * 5000).is_empty()


def conditions(source: str) -> list[str]:
    """Every condition of a module as a trace renders it: the tests of ``if``, ``while``, ``assert``,
    conditional expressions and comprehension filters, and each operand of a boolean operator."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            found.append(node.test)
        elif isinstance(node, ast.comprehension):
            found.extend(node.ifs)
        elif isinstance(node, ast.BoolOp):
            found.extend(node.values)
    return sorted({source_text(node) for node in found})


@pytest.mark.network
@pytest.mark.parametrize("version, rel", [
    ("0.5.11", "sglang/srt/server_args.py"),
    ("0.5.11", "sglang/srt/model_executor/model_runner.py"),
    ("0.5.11", "sglang/srt/configs/model_config.py"),
    ("0.5.23", "sglang/srt/arg_groups/speculative_hook.py"),
    ("0.5.23", "sglang/srt/arg_groups/attention_hook.py"),
    ("0.5.23", "sglang/srt/arg_groups/overrides.py"),
    ("0.5.23", "sglang/srt/layers/attention/attention_registry.py"),
])
def test_every_condition_of_real_modules_reads_the_same(tree, version, rel):
    texts = conditions((tree(version).root / rel).read_text())
    assert len(texts) > 50
    differ = [(text, reads_of_text(text), libcst_reads(text)) for text in texts if reads_of_text(text) != libcst_reads(text)]
    assert differ == []
