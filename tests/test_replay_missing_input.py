"""A replay on this machine that stops reading a path the launch names and this machine lacks (a draft model's
directory) says so: it is no prediction of SGLang's, and a fix replayed that way is 'not replayed', never unsound."""

from __future__ import annotations

from analyzer.contracts.trace import Event, EventKind, SiteRef, Trace
from analyzer.replay.launch_replay import missing_input

ARGV = ["--model-path", "/m", "--speculative-draft-model-path", "/models/EAGLE3-draft"]
HUB = "Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/models/EAGLE3-draft'."


def _raising(exc_type: str, message: str) -> Trace:
    error = Event(EventKind.RAISE, SiteRef("sglang/srt/utils/hf_transformers/config.py", 63, "parse"),
                  exc_type=exc_type, message=message)
    return Trace(engine="replay", events=[error], error=error)


def test_a_path_the_launch_names_that_is_not_here_is_what_the_replay_stopped_on(tmp_path):
    local = {"ssh": None, "python": None, "version": "0.5.12"}
    assert missing_input(_raising("OSError", HUB), ARGV, local) == "/models/EAGLE3-draft"
    assert missing_input(_raising("OSError", HUB), ["--speculative-draft-model-path=/models/EAGLE3-draft"], local) == "/models/EAGLE3-draft"
    # SGLang's own check, or a path this machine has, or a replay on the node itself: a real outcome
    assert missing_input(_raising("ValueError", HUB), ARGV, local) is None
    present = tmp_path / "draft"
    present.mkdir()
    assert missing_input(_raising("OSError", f"cannot read {present}"), ["--speculative-draft-model-path", str(present)], local) is None
    assert missing_input(_raising("OSError", HUB), ARGV, {**local, "ssh": "user@node"}) is None
    assert missing_input(Trace(engine="replay"), ARGV, local) is None


def test_a_raise_the_replay_meets_on_the_launch_as_given_too_judges_no_change(monkeypatch):
    from types import SimpleNamespace

    from analyzer.commands import fix as fix_module

    kimi = "The checkpoint you are trying to load has model type `kimi_k2` but Transformers does not recognize this architecture."
    check = "page size must be 1"
    local = {"ssh": None, "python": None, "version": "0.5.10"}

    def judged(base: Trace, predicted: Trace, fix_run: Trace):
        runs = []
        monkeypatch.setattr(fix_module, "replay_launch", lambda *a, **k: runs.append(a) or SimpleNamespace(trace=base))
        explanation = SimpleNamespace(launch=SimpleNamespace(argv=["--model-path", "/m"], env={}), profile=None, model=None,
                                      request=SimpleNamespace(model_config="K"), trace=predicted)
        as_given = fix_module.AsGiven(explanation, local)
        first = fix_module.replay_cannot_judge(explanation, fix_run, ["--model-path", "/m"], as_given)
        assert fix_module.replay_cannot_judge(explanation, fix_run, ["--model-path", "/m"], as_given) == first
        assert len(runs) == (1 if fix_run.error is not None else 0)  # the launch as given is replayed once, when needed
        return first

    # the launch as given stops on the model's remote code too, and the engine predicts it resolves: no verdict on the fix
    assert "stops the same way (ValueError: The checkpoint" in judged(_raising("ValueError", kimi), Trace(engine="symbolic"),
                                                                      _raising("ValueError", kimi))
    # SGLang's check the engine predicted for the launch as given: a fix that still meets it fails
    assert judged(_raising("ValueError", check), _raising("ValueError", check), _raising("ValueError", check)) is None
    # the launch as given gets past it: the fix's raise is its own
    assert judged(Trace(engine="replay"), Trace(engine="symbolic"), _raising("ValueError", kimi)) is None
    assert judged(_raising("ValueError", kimi), Trace(engine="symbolic"), Trace(engine="replay")) is None  # the fix resolved
