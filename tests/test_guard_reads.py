"""GuardValue carries its reads: from the extraction's guard at its place, else from its text."""

from __future__ import annotations

from analyzer.commands import guard_reads
from analyzer.extract.text_reads import reads_of_text
from analyzer.knowledge.kinds import EventKind, SiteKind
from analyzer.contracts.extraction import Extraction, Function, Guard, Location, Reads, Site
from analyzer.contracts.trace import Event, GuardValue, SiteRef, Trace

FILE = "sglang/srt/server_args.py"


def _extraction() -> Extraction:
    # the extraction followed a local: `use_mla` was bound to `self.attention_backend == ...`
    guard = Guard("use_mla", True, location=Location(FILE, 10, 4, "ServerArgs._handle_x"),
                  reads=Reads(fields=["attention_backend", "enable_extra()"]))
    site = Site(SiteKind.RAISE, Location(FILE, 11, 8, "ServerArgs._handle_x"), "raise", guards=[guard])
    helper = Function(f"{FILE}::ServerArgs.enable_extra", FILE, "ServerArgs.enable_extra", 20, 22,
                      reads=Reads(fields=["mamba_scheduler_strategy"]))
    return Extraction("0", "A", "/", "h", sites=[site], functions={helper.id: helper})


def _trace(*guards: GuardValue) -> Trace:
    error = Event(EventKind.RAISE, SiteRef(FILE, 11, "ServerArgs._handle_x"), guards=list(guards))
    return Trace(engine="symbolic", events=[error], error=error)


def test_a_condition_gets_the_reads_extraction_found_at_its_place():
    trace = _trace(GuardValue("use_mla", True, True, FILE, 10, "ServerArgs._handle_x"))
    guard_reads.attach_reads(trace, _extraction())
    (guard,) = trace.error.guards
    # the local is followed (the text alone names no field), the helper is expanded to what it reads
    assert guard.reads.fields == ["attention_backend", "enable_extra()"]
    assert guard_reads.fields_read(_extraction(), guard.reads) == ["attention_backend", "mamba_scheduler_strategy"]


def test_a_condition_the_extraction_has_no_guard_for_is_read_from_its_text():
    trace = _trace(GuardValue("self.tp_size > 1 and is_hopper_with_cuda_12_3() and envs.SGLANG_X.get()",
                              True, True, "sglang/srt/other.py", 3, "f"))
    guard_reads.attach_reads(trace, _extraction())
    reads = trace.error.guards[0].reads
    assert (reads.fields, reads.env, reads.probes) == (["tp_size"], ["SGLANG_X"], ["is_hopper_with_cuda_12_3()"])
    assert guard_reads.probes_called(reads) == ["is_hopper_with_cuda_12_3"]
    # text that is not an expression reads nothing
    assert reads_of_text("for x in self.items").is_empty()


def test_without_text_reads_only_the_extracted_ones_are_attached_and_the_rest_read_when_asked():
    # a fix's trial runs: a start-up condition no extracted guard covers keeps None (no libcst import for it)
    outside = GuardValue("self.tp_size > 1", True, True, "sglang/srt/other.py", 3, "f")
    inside = GuardValue("use_mla", True, True, FILE, 10, "ServerArgs._handle_x")
    trace = _trace(inside, outside)
    guard_reads.attach_reads(trace, _extraction(), from_text=False)
    assert inside.reads.fields == ["attention_backend", "enable_extra()"] and outside.reads is None
    assert guard_reads.reads_of(outside).fields == ["tp_size"]


def test_reads_survive_the_trace_json():
    trace = _trace(GuardValue("cfg.page_size == 1", True, True, FILE, 10, "f", reads=Reads(fields=["page_size"])),
                   GuardValue("x", True, None))
    back = Trace.from_json(trace.to_json())
    first, second = back.error.guards
    assert first.reads == Reads(fields=["page_size"]) and second.reads is None
    assert back.to_json() == trace.to_json()


def test_a_traces_unanswered_files_round_trip_and_a_bad_entry_is_dropped():
    asked = {"path": "/sys/class/infiniband", "query": "isdir", "taken": False, "condition": "os.path.isdir(p)",
             "file": "sglang/srt/arg_groups/validation_hook.py", "line": 537, "function": "validate_ib_devices"}
    trace = Trace(engine="symbolic", unanswered_files=[asked])
    assert Trace.from_json(trace.to_json()).unanswered_files == [asked]
    data = trace.to_dict()
    data["unanswered_files"] = [asked, "not a dict", 7]
    assert Trace.from_dict(data).unanswered_files == [asked]
    data["unanswered_files"] = "not a list"
    assert Trace.from_dict(data).unanswered_files == []
