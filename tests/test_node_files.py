"""The node's answers for the files a launch names (analyzer.node_files): --assume-file, a profile's
[files] table and this machine's own files, as the symbolic engine uses them."""

from __future__ import annotations

import pytest

from analyzer import node_files
from analyzer.cli import main
from analyzer.errors import SgtraceError
from analyzer.commands.explain import ExplainRequest, explain
from analyzer.profiles import load_profile


def test_assumptions_read_path_and_kind():
    assert node_files.parse_assumptions(["/etc/ssl/key.pem=exists", "/srv/models/=dir", "/a/../b=missing"]) == {
        "/etc/ssl/key.pem": "file", "/srv/models": "dir", "/b": "missing"}


@pytest.mark.parametrize("item, words", [
    ("/etc/key.pem", "expected PATH=exists"),
    ("/etc/key.pem=maybe", "expected PATH=exists"),
    ("key.pem=exists", "is relative"),
    ("=exists", "not a file path"),
    ("/etc/k\0ey=exists", "not a file path"),
])
def test_a_bad_assumption_is_a_one_line_error(item, words):
    with pytest.raises(SgtraceError, match=words):
        node_files.parse_assumptions([item])


def test_a_profile_files_table_is_checked(tmp_path):
    good = tmp_path / "node.toml"
    good.write_text('name = "n"\nvendor = "nvidia"\nruntime = "cuda"\n[files]\n"/etc/ssl/key.pem" = "exists"\n"/data" = "dir"\n')
    assert dict(load_profile(good).files) == {"/etc/ssl/key.pem": "file", "/data": "dir"}
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "n"\nvendor = "nvidia"\nruntime = "cuda"\n[files]\n"/etc/ssl/key.pem" = "yes"\n')
    with pytest.raises(SgtraceError, match=r"\[files\] '/etc/ssl/key.pem' = 'yes'"):
        load_profile(bad)


def test_only_the_absolute_paths_of_the_flags_are_looked_at(tmp_path):
    here = tmp_path / "key.pem"
    here.write_text("")
    given = {"ssl_keyfile": str(here), "ssl_certfile": "cert.pem", "model_path": str(tmp_path),
             "lora_paths": [str(tmp_path), str(tmp_path / "gone")]}
    assert node_files.answers_here(given) == {str(here): "file", str(tmp_path): "dir"}


SSL = "--model-path /m --ssl-keyfile {key} --ssl-certfile {cert}"


def ssl_explanation(key: str, cert: str, assume=(), profile="h100"):
    return explain(ExplainRequest(sglang="0.5.23", profile=profile, model_config="Llama-3.1-8B-Instruct",
                                  args=SSL.format(key=key, cert=cert), assume_files=list(assume)))


@pytest.mark.network
def test_files_the_node_has_let_the_ssl_check_pass(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    key.write_text("")
    cert.write_text("")
    here = ssl_explanation(str(key), str(cert))
    assert here.trace.error is None
    assert any(f"{key}: taken as a file on the node (this machine has it)" in n for n in here.trace.notes)
    assumed = ssl_explanation("/etc/tls/key.pem", "/etc/tls/cert.pem", ["/etc/tls/key.pem=exists", "/etc/tls/cert.pem=exists"])
    assert assumed.trace.error is None


@pytest.mark.network
def test_a_file_missing_on_the_node_is_the_error_sglang_raises(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    key.write_text("")
    cert.write_text("")
    missing = ssl_explanation(str(key), str(cert), [f"{key}=missing"])
    assert missing.trace.error is not None and "SSL key file not found" in missing.trace.error.message
    unknown = ssl_explanation("/etc/tls/key.pem", "/etc/tls/cert.pem")  # not here, not assumed: SGLang's check is assumed false
    assert unknown.trace.error is not None
    assert any("os.path.isfile" in n and "assumed" in n for n in unknown.trace.notes)


@pytest.mark.network
def test_assume_file_needs_a_profile_and_good_items(capsys):
    assert main(["explain", "--sglang", "0.5.23", "--args", "--model-path /m", "--assume-file", "/etc/k=exists"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--assume-file answers for the node of a --profile" in err[0]
    assert main(["explain", "--sglang", "0.5.23", "--profile", "h100", "--args", "--model-path /m", "--assume-file", "k.pem=exists"]) == 2
    assert "is relative" in capsys.readouterr().err
