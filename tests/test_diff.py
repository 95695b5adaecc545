"""sgtrace diff: flags, fields and sites across versions (hand-built extractions), and P4 on real SGLang."""

from __future__ import annotations

import json

import pytest

from analyzer.views import diff as diff_view
from analyzer.cli import main
from analyzer.commands.diff import BehaviourDiff, Decisive, Normalizer, Outcome, ValueRow, diff_extractions, function_words
from analyzer.views.diff import flag_text, render
from analyzer.contracts.extraction import Extraction, FieldDecl, Flag, Guard, Location, Reads, Site
from analyzer.contracts.trace import Event, SiteRef
from conftest import FIXTURES

P1_ARGS = (
    "--model-path /models/Qwen3.5-122B-A10B --tp 4 --speculative-algo NEXTN --speculative-num-steps 3 "
    "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
)
PROFILE = "rtx-pro-6000-blackwell"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- hand-built extractions --------------------------------------------------------------------------


def extraction(version: str, fields: dict, flags: list[Flag], sites: list[Site] = (), era: str = "A") -> Extraction:
    return Extraction(version=version, era=era, root="/nowhere", content_hash=version,
                      fields={n: FieldDecl(n, default=d, default_src=repr(d)) for n, d in fields.items()},
                      flags=list(flags), sites=list(sites))


def alias(option: str, dest: str, target: str) -> Flag:
    return Flag([option], dest, action="custom:DeprecatedAliasStoreAction", deprecated=True, replacement=target)


OLD = extraction("1.0", {"strat": "auto", "keep": 1, "gone": False, "tp_size": 1, "mode": None}, [
    Flag(["--strat"], "strat", default="auto", choices=["auto", "x"], help="The strategy to use for the cache."),
    Flag(["--keep"], "keep", default=1, choices=[1, 2]),
    Flag(["--gone"], "gone", action="store_true", default=False, nargs=0),
    Flag(["--tensor-parallel-size"], "tp_size", default=1),
    Flag(["--mode"], "mode"),
])
NEW = extraction("2.0", {"strategy": "auto", "keep": 2, "tp_size": 1, "mode": False, "fresh": 0}, [
    Flag(["--strategy"], "strategy", default="auto", choices=["auto", "x", "y"], help="The strategy to use for the cache."),
    alias("--strat", "strategy", "--strategy"),
    Flag(["--keep"], "keep", default=2, choices=[1, 2, 3]),
    Flag(["--tp-size"], "tp_size", default=1),
    Flag(["--mode"], "mode", action="store_true", default=False, nargs=0),
    Flag(["--fresh"], "fresh", default=0),
])
NEWER = extraction("3.0", {n: f.default for n, f in NEW.fields.items()}, [f for f in NEW.flags if f.primary != "--strat"])


def by_option(diff):
    out: dict[str, dict[str, object]] = {}
    for change in diff.flags:
        out.setdefault(change.option, {})[change.kind] = change
    return out


def test_flag_changes():
    flags = by_option(diff_extractions(OLD, NEW))
    assert flags["--strat"]["deprecated"].replacement == "--strategy"
    assert (flags["--strat"]["dest"].old, flags["--strat"]["dest"].new) == ("strat", "strategy")
    assert "added" in flags["--strategy"] and "added" in flags["--fresh"]
    assert (flags["--keep"]["default"].old, flags["--keep"]["default"].new) == (1, 2)
    assert flag_text(flags["--keep"]["choices"]) == "choices: added 3"
    assert flags["--gone"]["removed"].replacement is None
    renamed = flags["--tensor-parallel-size"]["renamed"]
    assert renamed.replacement == "--tp-size" and "--tp-size" not in flags  # not reported again as added
    assert flag_text(renamed).startswith("removed; use --tp-size instead")
    assert (flags["--mode"]["action"].old, flags["--mode"]["action"].new) == ("store", "store_true")
    assert set(flags) == {"--strat", "--strategy", "--keep", "--gone", "--tensor-parallel-size", "--mode", "--fresh"}


def test_removed_alias_names_what_to_use_instead():
    [change] = diff_extractions(NEW, NEWER).flags
    assert (change.option, change.kind, change.replacement) == ("--strat", "removed", "--strategy")
    assert flag_text(change) == "removed; use --strategy instead (it set strategy)"


def test_field_changes_match_by_alias_and_dest():
    diff = diff_extractions(OLD, NEW)
    fields = {(c.name, c.kind): c for c in diff.fields}
    assert fields[("strat", "renamed")].new_name == "strategy"
    assert fields[("strat", "renamed")].rename.via == "alias"
    assert fields[("strat", "choices")].new == ["auto", "x", "y"]
    assert (fields[("keep", "default")].old, fields[("keep", "default")].new) == (1, 2)
    assert ("gone", "removed") in fields and ("fresh", "added") in fields
    assert ("strategy", "added") not in fields  # the rename target is not also "added"


def test_namespace_move_and_default_with_fallback():
    old = extraction("1.0", {"ratio": 0.9}, [Flag(["--ratio"], "ratio", default=0.9)], era="B")
    new = extraction("2.0", {"ratio": None}, [Flag(["--ratio"], "ratio", default=None)], era="B")
    old.fields["ratio"].namespace = "exec.mamba"
    new.fields["ratio"].namespace, new.fields["ratio"].fallback = "schedule", 0.9
    fields = {c.kind: c for c in diff_extractions(old, new).fields}
    assert (fields["namespace"].old, fields["namespace"].new) == ("exec.mamba", "schedule")
    assert fields["default"].new == {"default": None, "fallback": 0.9}
    assert "default 0.9 -> None (fallback 0.9)" in render(diff_extractions(old, new))


def test_field_rename_inferred_when_the_alias_is_gone():
    diff = diff_extractions(OLD, NEWER)
    assert diff.renames["strat"].new == "strategy" and diff.renames["strat"].via == "inferred"
    assert by_option(diff)["--strat"]["renamed"].replacement == "--strategy"


def test_focus_accepts_either_name():
    for name in ("strat", "strategy"):
        diff = diff_extractions(OLD, NEW, [name])
        assert diff.focus == [("strat", "strategy")]
        assert {c.option for c in diff.flags} == {"--strat", "--strategy"}


# -- normalization and site matching -----------------------------------------------------------------


def test_normalizer():
    norm = Normalizer({"strat": "strategy"})
    assert norm.expr('( self.strat  ==  "auto" )') == "strategy == 'auto'"
    assert norm.expr("view.strat == 'auto'") == norm.expr("server_args.strat=='auto'") == "strategy == 'auto'"
    assert norm.expr("resolved_view(server_args).page_size is None") == "page_size is None"
    assert norm.expr("self.x == 1", polarity=False) == "x != 1"
    assert norm.expr("not self.disable_radix_cache", polarity=False) == "disable_radix_cache"
    assert norm.expr("for x in y") == "for x in y"  # not an expression: kept, spaces normalized
    assert function_words("ServerArgs._handle_mamba_radix_cache") == function_words("_mamba_radix_cache_resolution")


def site(kind, line, function, field=None, value=None, guards=(), message=None, file="sglang/srt/server_args.py"):
    return Site(kind=kind, location=Location(file, line, 0, function), idiom="assign" if kind == "write" else "raise",
                field=field, value=value, guards=[Guard(g, p) for g, p in guards], message=message,
                exc_type="ValueError" if kind == "raise" else None, reads=Reads(fields=[field] if field else []))


def test_sites_match_by_function_field_and_normalized_guard():
    old_sites = [
        site("write", 100, "ServerArgs._handle_missing_defaults", "strat", '"no_buffer"', [('self.strat == "auto"', True)]),
        site("write", 300, "ServerArgs._handle_pd", "strat", '"no_buffer"', [('self.mode == "decode"', True)]),
        site("raise", 200, "ServerArgs._handle_mamba_radix_cache", message="strat {self.strat} is bad for spec",
             guards=[("self.strat == 'no_buffer'", True), ("self.speculative_algorithm is None", False)]),
        site("write", 210, "ServerArgs._handle_mamba_radix_cache", "page_size", "1", [("self.page_size != 1", True)]),
    ]
    new_sites = [
        site("write", 40, "_mamba_radix_cache_resolution", "strategy", "'no_buffer'",
             [("view.disable_radix_cache", False), ("view.strategy == 'auto'", True), ("wants_overlap", False)],
             file="sglang/srt/arg_groups/overrides.py"),
        site("write", 38, "_mamba_radix_cache_resolution", "strategy", "'extra_buffer'",
             [("view.disable_radix_cache", False), ("view.strategy == 'auto'", True), ("wants_overlap", True)],
             file="sglang/srt/arg_groups/overrides.py"),
        site("raise", 900, "handle_mamba_radix_cache", message="strat {cfg.strategy} is bad for spec",
             guards=[("( cfg.strategy=='no_buffer' )", True), ("server_args.speculative_algorithm is not None", True)],
             file="sglang/srt/arg_groups/model_hook.py"),
        site("write", 905, "handle_mamba_radix_cache", "page_size", "1", [("cfg.page_size not in (1, None)", True)],
             file="sglang/srt/arg_groups/model_hook.py"),
    ]
    old = extraction("1.0", {"strat": "auto", "page_size": None}, [Flag(["--strat"], "strat")], old_sites)
    new = extraction("2.0", {"strategy": "auto", "page_size": None}, [Flag(["--strategy"], "strategy"), alias("--strat", "strategy", "--strategy")],
                     new_sites, era="B")
    changes = diff_extractions(old, new).sites
    summary = {((c.old.location.line if c.old else None), (c.new.location.line if c.new else None)): (c.kind, c.aspects) for c in changes}
    # the raise moved from a method to a hook, renamed field, other receivers, quotes, spaces, parentheses: unchanged
    assert (200, 900) not in summary and not any(c.site_kind == "raise" for c in changes)
    assert summary[(100, 40)] == ("changed", ["guard", "moved"])  # same value, conditions added
    assert summary[(300, None)] == ("removed", [])
    assert summary[(None, 38)] == ("added", [])
    assert summary[(210, 905)] == ("changed", ["guard"])  # same function (method -> hook), other condition
    [pair] = [c for c in changes if c.old is not None and c.old.location.line == 100]
    assert pair.guards_kept == ["strategy == 'auto'"]
    assert pair.guards_added == ["not disable_radix_cache", "not wants_overlap"]
    text = render(diff_extractions(old, new, ["strat"]))
    assert "writes to strategy" in text and "+ when not disable_radix_cache" in text and "= when strategy == 'auto'" in text


# -- with a launch: the outcome first, the lists cut to what the launch touches ----------------------


def _event(kind, site_, **facts):
    where_ = site_.location
    return Event(kind=kind, site=SiteRef(where_.file, where_.line, where_.function), **facts)


def launch_diff():
    """1.0 raises (its default 'no_buffer' trips a check), 2.0 resolves (the default is 'extra'); --keep's
    default changed too (a value of the launch differs), --gone went away (nothing of the launch)."""
    old = extraction("1.0", {"strat": "auto", "keep": 1, "gone": False}, [
        Flag(["--strat"], "strat", default="auto", choices=["auto", "no_buffer"]), Flag(["--keep"], "keep", default=1),
        Flag(["--gone"], "gone", default=False)], [
        site("write", 100, "ServerArgs._handle_defaults", "strat", '"no_buffer"', [('self.strat == "auto"', True)]),
        site("raise", 200, "ServerArgs._handle_cache", message="strat no_buffer is bad", guards=[("self.strat == 'no_buffer'", True)])])
    new = extraction("2.0", {"strat": "auto", "keep": 2}, [
        Flag(["--strat"], "strat", default="auto", choices=["auto", "no_buffer", "extra"]), Flag(["--keep"], "keep", default=2)], [
        site("write", 40, "ServerArgs._handle_defaults", "strat", '"extra"', [('self.strat == "auto"', True)])])
    diff = diff_extractions(old, new)
    [write] = [c for c in diff.sites if c.site_kind == "write"]
    [gone] = [c for c in diff.sites if c.site_kind == "raise"]
    old_out = Outcome("1.0", "raises", error="ValueError: strat no_buffer is bad", error_site=SiteRef("sglang/srt/server_args.py", 200, "ServerArgs._handle_cache"),
                      final={"strat": "no_buffer", "keep": 1, "gone": False},
                      decisive=[Decisive(_event("write", write.old, field="strat", old="auto", new="no_buffer"), write),
                                Decisive(_event("raise", gone.old, exc_type="ValueError", message="strat no_buffer is bad"), gone)])
    new_out = Outcome("2.0", "resolves", final={"strat": "extra", "keep": 2},
                      decisive=[Decisive(_event("write", write.new, field="strat", old="auto", new="extra"), write)])
    diff.behaviour = BehaviourDiff(["--model-path", "/m"], old_out, new_out,
                                   values=[ValueRow("strat", "strat", "no_buffer", "extra"), ValueRow("keep", "keep", 1, 2)])
    return diff


def test_a_launch_leads_with_its_outcome_and_the_sites_that_made_the_difference():
    lines = render(launch_diff()).splitlines()
    assert lines[1] == "launch: raises -> resolves"
    assert lines[2:5] == ["  made the difference:",
                          "    1.0's raise at sglang/srt/server_args.py:200 (site gone in 2.0)",
                          "    1.0: strat 'auto' -> 'no_buffer' at sglang/srt/server_args.py:100 (site changed: value)"]
    assert lines.index("Behaviour of the launch") < lines.index(next(line for line in lines if line.startswith("Flags")))


def test_a_launch_cuts_the_lists_to_what_it_touches_nearest_first(monkeypatch):
    monkeypatch.setattr(diff_view, "SHOWN", 1)
    text = render(launch_diff())
    flags = text[text.index("\nFlags"):text.index("\nFields")]
    # --strat: the events that made the difference write its field; --keep: only its value differs; --gone: neither
    assert "3 change(s) of 3 option(s); 2 touch the launch, the nearest 1:" in flags
    assert "  --strat\n      choices: added extra" in flags and "--keep" not in flags and "--gone" not in flags
    assert "(1 more touch the launch, 1 do not: --all lists every change, --json has them all)" in flags
    fields = text[text.index("\nFields"):text.index("\nSites")]
    assert "(1 of them changed as their flag above says)" in fields  # strat's choices: said once, with its flag
    assert "  keep\n      default 1 -> 2" in fields and "gone" not in fields
    sites = text[text.index("\nSites"):]
    assert "2 touch the launch, 2 of them in the events above)" in sites
    everything = render(launch_diff(), show_all=True)
    assert "  --gone\n      removed" in everything and "  --keep\n" in everything and "--all lists" not in everything
    assert "    = 'no_buffer' -> 'extra': changed (value)" in everything  # the full sites section


def test_without_a_launch_the_lists_stay_whole():
    diff = launch_diff()
    diff.behaviour = None
    text = render(diff)
    assert "launch:" not in text and "touch the launch" not in text and "  --gone\n" in text


# -- P4 on the real wheels -------------------------------------------------------------------------


def diff_json(capsys, *argv):
    code, out, err = run(capsys, "diff", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.network
def test_p4_rename_and_auto_logic_0_5_11_to_0_5_14(capsys):
    data = diff_json(capsys, "0.5.11", "0.5.14", "--field", "mamba_scheduler_strategy")
    assert data["focus"] == [{"old": "mamba_scheduler_strategy", "new": "mamba_radix_cache_strategy"}]
    assert data["renames"]["mamba_scheduler_strategy"]["to"] == "mamba_radix_cache_strategy"
    assert data["renames"]["mamba_scheduler_strategy"]["via"] == "alias"
    flags = {(f["option"], f["change"]): f for f in data["flags"]}
    assert flags[("--mamba-scheduler-strategy", "deprecated")]["replacement"] == "--mamba-radix-cache-strategy"
    assert flags[("--mamba-scheduler-strategy", "dest")]["new"] == "mamba_radix_cache_strategy"
    writes = [s for s in data["sites"] if s["kind"] == "write" and s["target"] == "mamba_radix_cache_strategy"]
    by_line = {((s["old"] or {}).get("line"), (s["new"] or {}).get("line")): s for s in writes}
    # 0.5.11: auto -> no_buffer unconditionally in _handle_missing_default_values ...
    no_buffer = by_line[(1082, 4393)]
    assert no_buffer["old"]["function"] == "ServerArgs._handle_missing_default_values"
    assert no_buffer["old"]["guards_normalized"] == ["mamba_radix_cache_strategy == 'auto'"]
    # ... 0.5.14: only when neither overlap nor paging is wanted or the model does not support extra_buffer
    assert no_buffer["new"]["function"] == "ServerArgs._handle_mamba_radix_cache"
    assert set(no_buffer["aspects"]) == {"guard", "moved"}
    assert any("wants_overlap or wants_paging" in g and g.startswith("not ") for g in no_buffer["guards_added"])
    extra = by_line[(None, 4391)]
    assert extra["change"] == "added" and extra["new"]["value_normalized"] == "'extra_buffer'"
    assert any(g.startswith("(wants_overlap or wants_paging) and") for g in extra["new"]["guards_normalized"])
    raises = {(s["old"] or {}).get("line"): s for s in data["sites"] if s["kind"] == "raise"}
    assert raises[2453]["change"] == "removed" and "Speculative decoding for" in raises[2453]["old"]["message"]

    code, out, _ = run(capsys, "diff", "0.5.11", "0.5.14", "--field", "mamba_scheduler_strategy")
    assert code == 0
    assert "became a deprecated alias of --mamba-radix-cache-strategy" in out
    assert "renamed to mamba_radix_cache_strategy" in out


@pytest.mark.network
@pytest.mark.parametrize("old, new", [("0.5.19", "0.5.20"), ("0.5.11", "0.5.23")])
def test_p4_removed_flag_names_its_replacement(capsys, old, new):
    data = diff_json(capsys, old, new, "--field", "mamba_radix_cache_strategy")
    [change] = [f for f in data["flags"] if f["option"] == "--mamba-scheduler-strategy"]
    assert change["change"] in ("removed", "renamed") and change["replacement"] == "--mamba-radix-cache-strategy"
    assert change["text"].startswith("removed; use --mamba-radix-cache-strategy instead")


@pytest.mark.network
def test_p1_behaviour_0_5_11_to_0_5_14(capsys):
    data = diff_json(capsys, "0.5.11", "0.5.14", "--field", "mamba_scheduler_strategy", "--args", P1_ARGS, "--profile", PROFILE)
    behaviour = data["behaviour"]
    assert behaviour["old"]["status"] == "raises" and behaviour["old"]["error"].startswith("ValueError: Speculative decoding")
    assert behaviour["old"]["error_site"]["line"] == 2453
    assert behaviour["new"]["status"] == "resolves"
    [row] = behaviour["values"]
    assert (row["old_field"], row["new_field"], row["old"], row["new"]) == (
        "mamba_scheduler_strategy", "mamba_radix_cache_strategy", "no_buffer", "extra_buffer")
    old_decisive = {(d["kind"], d["site"]["line"]): d["site_change"]["change"] for d in behaviour["old"]["decisive"]}
    assert old_decisive[("raise", 2453)] == "removed"
    assert old_decisive[("write", 1082)] == "changed"
    [new_write] = [d for d in behaviour["new"]["decisive"] if d["field"] == "mamba_radix_cache_strategy"]
    assert (new_write["new"], new_write["site"]["line"], new_write["site_change"]["change"]) == ("extra_buffer", 4391, "added")

    code, out, _ = run(capsys, "diff", "0.5.11", "0.5.14", "--field", "mamba_scheduler_strategy", "--args", P1_ARGS, "--profile", PROFILE)
    assert code == 0
    assert "0.5.11: raises ValueError: Speculative decoding" in out and "0.5.14: resolves" in out
    assert "What made the difference" in out
    assert "'auto' -> 'extra_buffer'  at sglang/srt/server_args.py:4391 in ServerArgs._handle_mamba_radix_cache  [site added in 0.5.14]" in out


@pytest.mark.network
def test_argv_rejected_by_new_names_the_replacement(capsys):
    args = P1_ARGS + " --mamba-scheduler-strategy extra_buffer"
    data = diff_json(capsys, "0.5.19", "0.5.20", "--field", "mamba_radix_cache_strategy", "--args", args,
                     "--env", "SGLANG_ENABLE_SPEC_V2=1", "--profile", PROFILE)
    new = data["behaviour"]["new"]
    assert new["status"] == "rejected" and "--mamba-scheduler-strategy" in new["error"]
    assert "use --mamba-radix-cache-strategy instead" in new["error"]
    assert new["replacements"] == [{"typed": "--mamba-scheduler-strategy", "use": "--mamba-radix-cache-strategy"}]
    assert new["retried"]["status"] == "resolves"
    assert data["behaviour"]["old"]["status"] == "resolves"
    code, out, _ = run(capsys, "diff", "0.5.19", "0.5.20", "--args", args, "--profile", PROFILE, "--field", "mamba_radix_cache_strategy")
    assert code == 0
    assert "0.5.20: rejects the command line" in out
    assert "--mamba-scheduler-strategy: not in 0.5.20; use --mamba-radix-cache-strategy instead" in out


@pytest.mark.network
def test_bad_inputs_are_one_line(capsys):
    code, _, err = run(capsys, "diff", "0.5.11", "0.5.14", "--field", "mamba_strategy")
    assert code == 2 and err.count("\n") == 1 and "did you mean" in err
    code, _, err = run(capsys, "diff", "0.5.11", "0.5.14", "--sglang", "0.5.11")
    assert code == 2 and err.count("\n") == 1 and "OLD NEW" in err
    code, _, err = run(capsys, "diff", "0.5.11", "0.5.14", "--profile", PROFILE)
    assert code == 2 and err.count("\n") == 1 and "--args" in err


@pytest.mark.network
def test_p1_diff_0_5_11_to_0_5_23_says_the_outcome_first_and_fits_150_lines(capsys):
    argv = ["0.5.11", "0.5.23", "--service", str(FIXTURES / "inputs" / "p1.service"), "--profile", PROFILE]
    code, out, err = run(capsys, "diff", *argv)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) <= 150
    head = "\n".join(lines[:15])
    assert "launch: raises -> resolves" in head
    assert "0.5.11's raise at sglang/srt/server_args.py:2453 (site gone in 0.5.23)" in head
    assert "0.5.23: mamba_radix_cache_strategy 'auto' -> 'extra_buffer' at sglang/srt/arg_groups/overrides.py:483" in head
    # the flag the verdict's cause is set by comes first; the rest is counted and behind --all
    flags = lines[next(i for i, line in enumerate(lines) if line.startswith("Flags")) + 1:]
    assert flags[0] == "  --mamba-scheduler-strategy" and flags[1].startswith("      removed; use --mamba-radix-cache-strategy instead")
    assert out.count("--all lists every change") == 3
    data = diff_json(capsys, *argv)
    options = {f["option"] for f in data["flags"]}
    code, full, _ = run(capsys, "diff", *argv, "--all")
    assert code == 0
    listed = {line.strip() for line in full.splitlines() if line.startswith("  --")}
    assert options <= listed and len([o for o in options if f"  {o}\n" in out]) < len(options)
