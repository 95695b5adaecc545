"""The launch adapters' table (analyzer/inputs/adapters.py) is what every command reads a launch through."""

from __future__ import annotations

import dataclasses

import click
import pytest

from analyzer.commands.check import LAUNCH_KEYS
from analyzer.cli import COMMANDS, cli
from analyzer.cli.options import same_inputs_command
from analyzer.commands.explain import ExplainRequest, load_launch
from analyzer.inputs import adapters


def test_every_adapter_is_a_field_of_the_request():
    fields = {f.name for f in dataclasses.fields(ExplainRequest)}
    assert set(adapters.KEYS) <= fields
    assert LAUNCH_KEYS == adapters.KEYS


@pytest.mark.parametrize("name", ["explain", "fix", "replay", "report", "memory", "diff", "upgrade"])
def test_each_command_that_takes_a_launch_has_every_adapter_option(name):
    assert name in COMMANDS
    command = cli.get_command(click.Context(cli), name)
    options = {o for p in command.params for o in getattr(p, "opts", [])}
    assert {a.option for a in adapters.ADAPTERS} <= options


def test_a_launch_is_read_by_its_adapter_and_named_by_it(tmp_path):
    unit = tmp_path / "x.service"
    unit.write_text("[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m --tp 2\n")
    launch = load_launch(ExplainRequest(service=str(unit)))
    assert launch.argv[-2:] == ["--tp", "2"]
    assert adapters.file_of(launch.origin) == str(unit)
    assert adapters.origin_words(launch.origin) == f"systemd unit {unit}"
    args = load_launch(ExplainRequest(args="--model-path /m"))
    assert adapters.file_of(args.origin) is None and adapters.origin_words(args.origin) == "--args"


def test_two_adapters_at_once_are_refused_by_their_options():
    from analyzer.errors import SgtraceError

    with pytest.raises(SgtraceError, match="give one of --args, --cmd, --service, --script .got --args, --cmd."):
        load_launch(ExplainRequest(args="--model-path /m", cmd="sglang serve --model-path /m"))


def test_the_same_inputs_command_repeats_the_adapter_option():
    request = ExplainRequest(sglang="0.5.11", script="run.sh", env=["A=1"])
    assert same_inputs_command("fix", request) == "sgtrace fix --sglang 0.5.11 --script run.sh --env A=1"


def test_each_file_adapter_says_how_fix_write_edits_it():
    assert {a.key for a in adapters.ADAPTERS if a.patch is not None} == set(adapters.FILE_KEYS)
    unit = ["[Service]\n", "Environment=A=1\n", "ExecStart=/usr/bin/python3 -m sglang.launch_server \\\n",
            "    --model-path /m\n", "Restart=always\n"]
    style = adapters.patch_style("service:/etc/systemd/system/x.service")
    assert style.env_position(unit) == 2 and style.env_line("B", "2") == "Environment=B=2\n"
    assert style.command_end(unit) == 4  # the ExecStart= line and its continuation
    assert style.env_position(["[Service]\n", "ExecStart=/bin/x\n"]) == 1  # no Environment=: just before the command
    script = ["#!/bin/sh\n", "export A=1\n", "python3 -m sglang.launch_server --model-path /m > log 2>&1\n"]
    style = adapters.patch_style("script:/opt/run.sh")
    assert style.env_position(script) == 2 and style.env_line("B", "2") == "export B=2\n"
    assert style.command_end(script) is None and style.trailing_redirect
    assert adapters.patch_style("args") is None
