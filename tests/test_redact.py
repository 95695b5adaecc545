"""What sgtrace writes for others keeps secrets out, and nothing it prints drives a terminal.

Secrets: a unit's ``HF_TOKEN`` and ``--api-key``/``--admin-api-key`` (flags found in SGLang 0.5.11's own
flag table) are absent from the Markdown, HTML and JSON reports, which say what was redacted;
``--no-redact`` keeps them. Escapes: a coloured journal line matches its raise site, and an OSC sequence
in ``--error`` or in a file name reaches neither the terminal nor a report raw.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.controls import printable, strip_escapes
from analyzer.redact import REDACTED, for_launch, secret_dest, secret_env_name

REPO = Path(__file__).resolve().parent.parent
ERA_A = REPO / "fixtures" / "sites" / "era_a"
HF_TOKEN = "hf_" + "Zq8vLw3Xk2Tn9Rb5Yc7Hd1Jf4Gm6Ps0Ua"
API_KEY = "sk-live-3f9a0c7e5b1d4a2f8e6c"
ADMIN_KEY = "adm1n"  # shorter than a free-text match: replaced only where it stands whole
SECRETS = (HF_TOKEN, API_KEY, ADMIN_KEY)
OSC = "\x1b]0;pwned\x07"
HYPERLINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def secret_unit(tmp_path: Path) -> Path:
    unit = tmp_path / "llama.service"
    unit.write_text(
        "[Service]\n"
        f"Environment=HF_TOKEN={HF_TOKEN} SGLANG_MAX_NEW_TOKENS_LIMIT=4096\n"
        "ExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --tp 1 \\\n"
        f"    --api-key {API_KEY} --admin-api-key {ADMIN_KEY}\n"
    )
    return unit


REPORT = ["report", "--sglang", "0.5.11", "--profile", "h200"]


@pytest.mark.network
@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_reports_redact_the_token_and_the_api_keys_and_say_so(capsys, tmp_path, fmt):
    output = tmp_path / f"report.{fmt}"
    code, _out, err = run(capsys, *REPORT, "--service", secret_unit(tmp_path), "-o", output)
    assert code == 0, err
    text = output.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in text, f"{secret} in the {fmt} report"
    assert "SGLANG_MAX_NEW_TOKENS_LIMIT" in text and "4096" in text  # a tuning variable is not a secret
    if fmt == "json":
        data = json.loads(text)
        assert sorted(data["report"]["redacted"]) == ["--admin-api-key", "--api-key", "HF_TOKEN"]
        assert data["report"]["env"]["HF_TOKEN"] == REDACTED and data["trace"]["final"]["api_key"] == REDACTED
    else:
        code_of = (lambda s: f"<code>{s}</code>") if fmt == "html" else (lambda s: f"`{s}`")
        assert f"Redacted: {code_of('HF_TOKEN')}, {code_of('--api-key')}, {code_of('--admin-api-key')}." in text


@pytest.mark.network
def test_no_redact_keeps_the_secrets(capsys, tmp_path):
    code, out, err = run(capsys, *REPORT, "--service", secret_unit(tmp_path), "-o", "-", "--no-redact")
    assert code == 0, err
    assert all(secret in out for secret in SECRETS)
    assert "Redacted:" not in out and REDACTED not in out


def test_secret_names_and_dests():
    assert all(secret_env_name(n) for n in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY",
                                             "DB_PASSWORD", "GITHUB_TOKEN", "SGLANG_S3_SECRET_ACCESS_KEY", "APIKEY"))
    assert not any(secret_env_name(n) for n in ("SGLANG_MAX_NEW_TOKENS_LIMIT", "SGLANG_PATCH_TOKENIZER", "HF_HOME",
                                                 "CUDA_VISIBLE_DEVICES", "SGLANG_ENABLE_SPEC_V2"))
    assert all(secret_dest(d) for d in ("api_key", "admin_api_key", "ssl_keyfile_password", "hf_token"))
    assert not any(secret_dest(d) for d in ("tokenizer_path", "bucket_time_to_first_token", "speculative_token_map",
                                            "ssl_keyfile", "max_total_tokens"))


def test_a_shaped_token_is_redacted_anywhere_and_short_values_only_whole():
    class Flag:
        def __init__(self, dest, *options):
            self.dest, self.option_strings = dest, list(options)

    redactor = for_launch(["--model-path", f"/models/{HF_TOKEN}", "--api-key", "abc", "--tp", "abc"], {},
                          [Flag("api_key", "--api-key"), Flag("tp_size", "--tp")])
    assert redactor.text(f"cannot open /models/{HF_TOKEN}/config.json") == f"cannot open /models/{REDACTED}/config.json"
    assert redactor.text("--api-key abc --tp abc") == f"--api-key {REDACTED} --tp abc"
    assert redactor.text("abc") == REDACTED and redactor.text("abcdef") == "abcdef"
    assert redactor.found == ["a value shaped like an hf_... token", "--api-key"]


# -- escape sequences ------------------------------------------------------------------------------


def test_strip_and_escape():
    line = f"Nov 29 node python[1]: \x1b[1;31mValueError:\x1b[0m bad{OSC} {HYPERLINK} \x9b2Jend\r\nnext"
    assert strip_escapes(line) == "Nov 29 node python[1]: ValueError: bad click end\nnext"
    assert printable(f"a{OSC}\u202eb\nc", newlines=True) == "a\\x1b]0;pwned\\x07\\u202eb\nc"
    assert "\x1b" not in printable(OSC) and "\n" not in printable("a\nb")


def test_a_coloured_journal_line_matches_its_raise_site(capsys, tmp_path):
    log = tmp_path / "journal.txt"
    log.write_text(
        "Nov 29 10:00:02 node python[4242]: \x1b[2K\x1b[1;31mValueError: \x1b[0mSpeculative decoding for "
        "\x1b[1mX\x1b[22m is not compatible with radix cache\n"
    )
    code, out, err = run(capsys, "explain", "--sglang", ERA_A, "--args", "--model-path /m", "--log", log)
    assert code == 1, err  # matched (here: these inputs cannot produce it); 2 would be "no site matches"
    assert "Matches the ValueError at sglang/srt/server_args.py:74" in out and "\x1b" not in out


def test_an_osc_sequence_in_the_error_is_not_echoed(capsysbinary):
    code = main(["explain", "--sglang", str(ERA_A), "--args", "--model-path /m",
                 "--error", f"ValueError: {OSC}Speculative decoding for X{HYPERLINK} is not compatible"])
    out, err = capsysbinary.readouterr()
    assert b"\x1b" not in out and b"\x07" not in out and b"\x1b" not in err
    assert code == 1 and b"Matches the ValueError" in out  # matched by its words


def test_an_escape_sequence_in_a_file_name_is_escaped_in_the_view_and_the_report(capsysbinary, tmp_path):
    unit = tmp_path / f"sglang{OSC}.service"
    unit.write_text("[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m\n")
    assert main(["explain", "--sglang", str(ERA_A), "--service", str(unit)]) == 0
    out, _err = capsysbinary.readouterr()
    assert b"\x1b" not in out and b"sglang\\x1b]0;pwned\\x07.service" in out
    for fmt in ("md", "html", "json"):
        report = tmp_path / f"r.{fmt}"
        assert main(["report", "--sglang", str(ERA_A), "--service", str(unit), "-o", str(report)]) == 0
        assert "\x1b" not in report.read_text(encoding="utf-8") and "\x07" not in report.read_text(encoding="utf-8")
    capsysbinary.readouterr()
