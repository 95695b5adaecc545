"""The ``schema`` number of every ``--json`` output, and the published JSON Schema of each.

Each command's JSON document carries ``"schema": N`` as its first key; N changes when the
document changes in a way a consumer could trip on (a key removed or renamed, a value of
another type). The schemas (JSON Schema, Draft 2020-12) are files of the package,
``analyzer/data/schemas/<document>.json``, each complete in itself. They are written by
this module from one set of definitions (a site, a guard, an event, a verdict ... are
defined once here and copied into every file that uses them):

    python -m analyzer.schemas            # rewrite the files
    python -m analyzer.schemas --check    # exit 1 when a file is not what this module makes

``tests/test_schemas.py`` checks both: the files are up to date, and every command's
output on real inputs validates against its file. Importing this module costs nothing at
run time: the numbers are constants, the schemas are built only when asked for.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .knowledge.kinds import EventKind, SiteKind
from .contracts.trace import PHASES
from .contracts.trace import SCHEMA_VERSION as TRACE_SCHEMA
from .commands.verdict import ROLES
from .node_files import HOLDS_FOR

# document -> its schema number. A history of each number is in README ("JSON output").
SCHEMA_NUMBERS = {
    "explain": 6,  # 2 was the Trace's number; 3: overrides[].site and fields.*.fired[].site are site objects;
    # 4: verdict.fix_skips_start_up; 5: a verdict's left_to_sglang; 6: verdict.fix_env null (unset), a change "drop-env"
    "explain-error": 4,  # explain --error / --log; 2: verdict.fix_skips_start_up; 3: the verdict's shape as explain 5; 4: as 6
    "fix": 2,  # 2: a change of kind "drop-env" (an env var of yours unset)
    "report": 5,  # 2: the trace's sites as objects, observed_error.sites as objects, "schema" at the top too;
    # 3: the verdict's fix_skips_start_up; 4: the verdict's left_to_sglang; 5: as explain 6
    "diff": 1,
    "sites": 1,
    "flags": 1,  # 1: an object {schema, sglang_version, flags}; before, a bare list of flags
    "graph": 1,
    "replay": TRACE_SCHEMA,  # the Trace the replay recorded, with where it ran
    "upgrade": 1,
    "memory": 1,  # sgtrace memory --json (analyzer/memory/)
}

SCHEMA_DIR = Path(__file__).resolve().parent / "data" / "schemas"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://sgtrace.invalid/schemas/"  # names the files; nothing is served there


def stamp(document: str, data: dict) -> dict:
    """``data`` with ``"schema"`` set to the document's number, as its first key."""
    return {"schema": SCHEMA_NUMBERS[document], **{k: v for k, v in data.items() if k != "schema"}}


def schema_path(document: str) -> Path:
    return SCHEMA_DIR / f"{document}.json"


def load(document: str) -> dict:
    """The published schema of ``document`` (the file in the package)."""
    return json.loads(schema_path(document).read_text(encoding="utf-8"))


# -- building blocks ---------------------------------------------------------------------------


def ref(name: str) -> dict:
    return {"$ref": f"#/$defs/{name}"}


def nullable(schema: dict) -> dict:
    if set(schema) == {"type"} and isinstance(schema["type"], str):
        return {"type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: dict) -> dict:
    return {"type": "array", "items": items}


def mapping(values: dict) -> dict:
    return {"type": "object", "additionalProperties": values}


def obj(properties: dict, optional: tuple[str, ...] = (), description: str | None = None) -> dict:
    """A closed object: every property required except ``optional``, nothing else allowed."""
    out: dict[str, Any] = {}
    if description:
        out["description"] = description
    out.update({"type": "object", "properties": properties,
                "required": [k for k in properties if k not in optional], "additionalProperties": False})
    return out


STR, INT, BOOL, NUM = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}
ANY: dict = {}
STRS = array(STR)


def definitions() -> dict[str, dict]:
    """Every shared definition, by name."""

    defs: dict[str, dict] = {}
    defs["value"] = {
        "description": "A value as sgtrace encodes it: JSON itself, or {repr}, {unknown: why}, {dict: {...}} for what JSON cannot hold.",
        "anyOf": [
            {"type": ["null", "boolean", "number", "string"]},
            array(ref("value")),
            obj({"repr": STR}),
            obj({"unknown": STR}),
            obj({"dict": mapping(ref("value"))}),
        ],
    }
    defs["site"] = obj({"file": STR, "line": INT, "function": STR},
                       description="Where in SGLang: the file (relative to the tree's root), the line, the function's qualified name.")
    defs["reads"] = obj({"fields": STRS, "env": STRS, "probes": STRS, "model": STRS},
                        description="The inputs an expression reads: fields, env vars, hardware probes, model-config attributes.")
    defs["guard"] = obj({"expr": STR, "polarity": BOOL, "value": ref("value"), "file": STR, "line": INT, "function": STR,
                         "reads": nullable(ref("reads"))},
                        description="A condition on the way to an event, as evaluated (polarity: it held, or its negation did).")
    defs["event"] = obj({
        "kind": {"enum": [k.value for k in EventKind]},
        "site": nullable(ref("site")),
        "field": nullable(STR),
        "path": nullable(STR),
        "old": ref("value"),
        "new": ref("value"),
        "guards": array(ref("guard")),
        "certain": BOOL,
        "condition": STRS,
        "message": nullable(STR),
        "exc_type": nullable(STR),
        "level": nullable(STR),
        "source": nullable(STR),
        "idiom": nullable(STR),
        "phase": {"enum": list(PHASES)},
    }, optional=("phase", "path"), description="One thing resolution did: a write, an env write, a warning, a raise, a probe.")
    defs["alternative"] = obj({"condition": STRS, "final": mapping(ref("value")), "error": nullable(ref("event")), "inputs": STRS},
                              optional=("inputs",))
    defs["trace"] = obj(trace_properties(), optional=TRACE_OPTIONAL, description="A Trace: what resolution did, from either engine.")
    defs["site_record"] = obj({
        "kind": {"enum": [k.value for k in SiteKind]},
        "file": STR, "line": INT, "function": STR, "idiom": STR,
        "field": nullable(STR), "env": nullable(STR), "value": nullable(STR), "literal": ANY, "path": nullable(STR),
        "source": nullable(STR), "exc_type": nullable(STR), "level": nullable(STR), "message": nullable(STR),
        "guards": array(obj({"expr": STR, "polarity": BOOL, "kind": STR, "text": STR})),
        "reads": ref("reads"),
    }, description="A site of the extraction: where SGLang writes a field or an env var, raises, or logs; its guards and what they read.")
    verdict = verdict_properties()
    defs["cause"] = obj({
        "field": STR, "kind": {"enum": ["field", "env", "probe", "model"]}, "value": ref("value"),
        "role": {"enum": list(ROLES)}, "site": nullable(ref("site")), "why": STR, "condition": STR, "alternative": ref("value"),
    })
    defs["verdict"] = obj({**verdict, "overrides": array(ref("field_verdict")), "weights_fit": obj({
        "weights_per_gpu_gib": NUM, "how": {"enum": ["index", "headers", "estimate"]}, "detail": STR, "gpu_gib": NUM,
        "mem_fraction_static": NUM, "kv_cache_gib": NUM, "fits": BOOL},
        description="for a launch that resolves: what the weights leave the KV cache on one GPU (the engine does not "
                    "measure it; sgtrace memory runs SGLang's sizing)")},
        optional=("overrides", "fix_trade_off", "fix_skips_start_up", "weights_fit", "left_to_sglang"))
    defs["field_verdict"] = obj({"field": STR, **verdict}, optional=("fix_trade_off", "fix_skips_start_up", "left_to_sglang"))
    defs["fix_candidate"] = obj({"changes": STRS, "origin": STRS, "outcome": STR, "trade_off": nullable(STR), "command": STR,
                                 "replay": nullable(STR), "note": STR, "assumes": STRS}, optional=("assumes",))
    defs["later_release"] = obj({"version": nullable(STR), "env": mapping(STR), "tried": STRS},
                                description="No change keeps it on this release: the nearest later cached release that "
                                            "accepts the launch (version null: none of those tried does)")
    defs["fixes"] = obj({"fixes": array(ref("fix_candidate")), "trade_offs": array(ref("fix_candidate")),
                         "plausible": array(ref("fix_candidate")), "later_release": nullable(ref("later_release"))},
                        optional=("later_release",))
    defs["term"] = obj({"text": STR, "value": ref("value"), "kind": STR, "origin": STR, "site": nullable(STR),
                        "steps": array(obj({"text": STR, "line": INT, "value": ref("value")})), "inputs": array(ref("term"))},
                       optional=("steps", "inputs"),
                       description="An operand of a condition or a computed value; site: where it was set, as file:line text.")
    defs["decision"] = obj({"expr": STR, "line": INT, "value": nullable(BOOL), "needed": nullable(BOOL), "terms": array(ref("term"))})
    defs["write_site"] = obj({"site": ref("site"), "function": STR, "value": nullable(STR)})
    defs["field_why"] = obj({
        "field": STR, "final": ref("value"),
        "fired": array(obj({"site": nullable(ref("site")), "function": nullable(STR), "old": ref("value"), "new": ref("value"),
                            "certain": BOOL, "decisions": array(ref("decision")), "value_expr": nullable(STR),
                            "terms": array(ref("term")), "value_line": nullable(INT), "value_decisions": array(ref("decision"))})),
        "skipped": array(obj({"function": STR, "sites": array(ref("write_site")), "reason": STR, "guard": nullable(ref("decision"))})),
        "not_reached": array(ref("write_site")),
        "explored_outcomes": INT,
    })
    defs["comparison"] = obj({
        "fields_compared": INT, "values_agree": INT, "unknown": STRS,
        "differences": array(obj({"field": STR, "symbolic": ref("value"), "replay": ref("value"), "symbolic_sites": STRS,
                                  "replay_sites": STRS, "kind": {"enum": ["value", "sites"]}})),
        "raise_agrees": BOOL, "symbolic_error": nullable(STR), "replay_error": nullable(STR), "replay_complete": BOOL, "agrees": BOOL,
    })
    defs["replay"] = obj({**trace_properties(), **replay_extras()}, optional=TRACE_OPTIONAL, description="A replay's Trace, with where it ran.")
    defs["replay_failure"] = obj({"schema": {"const": SCHEMA_NUMBERS["replay"]}, "error": STR, "kind": STR,
                                  "partial_trace": nullable(ref("trace")), "stderr_tail": nullable(STR)},
                                 description="A replay that did not finish: its one-line error and what the trace kept.")
    defs["explain"] = obj(explain_properties(), optional=EXPLAIN_OPTIONAL)
    defs["launch"] = obj({"launcher": STR, "origin": STR})
    return defs


TRACE_OPTIONAL = ("unanswered_files",)  # left out of a trace's JSON when empty (Trace.to_dict)


def trace_properties() -> dict:
    return {
        "engine": {"enum": ["symbolic", "replay"]},
        "sglang_version": STR,
        "sglang_source": STR,
        "argv": STRS,
        "env": mapping(STR),
        "profile": STR,
        "model_arch": nullable(STR),
        "given": mapping(ref("value")),
        "events": array(ref("event")),
        "final": mapping(ref("value")),
        "error": nullable(ref("event")),
        "alternatives": array(ref("alternative")),
        "probes": array(ref("value")),
        "stand_ins": STRS,
        "resolved_overrides": ref("value"),
        "notes": STRS,
        "unanswered_files": array(obj({"path": STR, "query": {"enum": list(HOLDS_FOR)}, "taken": BOOL,
                                       "condition": STR, "file": STR, "line": INT, "function": STR})),
        "complete": BOOL,
        "schema": INT,
    }


def replay_extras() -> dict:
    return {"where": STR, "launch": ref("launch"),
            "model": nullable(obj({"architecture": nullable(STR), "note": nullable(STR)})), "run_notes": STRS}


def verdict_properties() -> dict:
    return {
        "outcome": {"enum": ["raises", "resolves", "overrides", "kept", "inconsistent"]},
        "summary": STR,
        "causes": array(ref("cause")),
        "fix": nullable(STR),
        "fix_env": mapping(nullable(STR)),
        "fix_verified": BOOL,
        "fix_trade_off": {"const": True, "description": "present when the fix gives up a flag you gave (without it, "
                          "or its value when not given)"},
        "fix_skips_start_up": {"const": True, "description": "present when the fix was run through resolution and "
                               "check_server_args but not the model runner's start-up the engine would run for it "
                               "(sgtrace fix runs that too)"},
        "runs": INT,
        "left_to_sglang": {**ref("cause"), "description": "an override of a setting SGLang fills only because you left "
                           "it: the setting, and in alternative a value you can state that SGLang keeps (verified)"},
    }


EXPLAIN_OPTIONAL = ("verdict", "field_verdicts", "fields", "fixes", "replay", "comparison", "memory", *TRACE_OPTIONAL)


def explain_properties() -> dict:
    return {
        **trace_properties(),
        "schema": {"const": SCHEMA_NUMBERS["explain"]},
        "verdict": ref("verdict"),
        "field_verdicts": mapping(ref("verdict")),
        "fields": mapping(ref("field_why")),
        "overrides": array(obj({"field": STR, "given": BOOL, "flag": nullable(STR), "before": ref("value"), "after": ref("value"),
                                "site": nullable(ref("site")), "function": nullable(STR)},
                               description="An argument SGLang changed: given -> final, and the last write that did it "
                                           "(function: the same as site.function, kept for consumers of schema 2).")),
        "cause": array(obj({"expr": STR, "held": BOOL, "inputs": STRS})),
        "launch": ref("launch"),
        "fixes": ref("fixes"),
        "replay": {"anyOf": [ref("replay"), ref("replay_failure")]},
        "comparison": ref("comparison"),
        "memory": memory_document(),  # explain --memory --json
    }


def memory_document() -> dict:
    """``sgtrace memory --json`` (also ``explain --memory --json``'s ``memory``)."""
    return obj({
        "schema": {"const": SCHEMA_NUMBERS["memory"]}, "sglang_version": STR, "profile": nullable(STR), "model_arch": nullable(STR),
        "hybrid": BOOL, "strategy_field": nullable(STR),
        "inputs": obj({"total_gib": nullable(NUM), "startup_used_gib": NUM, "pre_model_load_gib": nullable(NUM),
                       "post_model_load_gib": nullable(NUM),
                       "weights": obj({"bytes": nullable(INT), "how": {"enum": ["index", "headers", "estimate", "given", "unknown"]},
                                       "detail": STR, "inputs": mapping(ANY), "per_rank_gib": nullable(NUM)}),
                       "sources": mapping(STR)}),
        "plans": array(obj({
            "strategy": nullable(STR), "chosen": BOOL,
            "numbers": array(obj({"name": STR, "value": ANY, "expr": STR, "site": nullable(ref("site"))})),
            "resolution_raises": array(obj({"type": STR, "message": STR, "site": nullable(ref("site"))})),
            "error": nullable(obj({"type": STR, "message": STR, "kind": {"enum": ["does-not-fit", "stopped"]},
                                   "site": nullable(ref("site"))})),
            "notes": STRS})),
        "notes": STRS,
        "replay": array(obj({"strategy": nullable(STR), "skipped": nullable(STR), "replay_error": nullable(mapping(ANY)),
                             "numbers": array(obj({"name": STR, "symbolic": ANY, "replay": ANY, "agree": BOOL}))})),
        "fixes": array(obj({"field": STR, "flag": STR, "value": ANY, "kv_cache_tokens": nullable(INT),
                            "max_running_requests": nullable(INT)})),
        "log": array(obj({"number": STR, "logged": STR, "site": STR, "line": STR, "planned": nullable(NUM)})),
    }, optional=("replay", "fixes", "log"))


# -- the documents ---------------------------------------------------------------------------


def documents() -> dict[str, tuple]:
    """document -> (title, the root schema, and definitions of its own when it has some)."""
    number = {k: {"const": v} for k, v in SCHEMA_NUMBERS.items()}
    keep_item = obj({"field": STR, "flag": nullable(STR), "given": ref("value"), "sglang_value": ref("value"),
                     "site": nullable(ref("site")), "change": nullable(STR), "env": mapping(STR),
                     "trade_off": nullable(STR), "why": STR, "renamed": BOOL, "moot": BOOL,
                     "alternative": nullable(STR), "moved": nullable(STR), "replay": nullable(STR),
                     "later_release": nullable(ref("later_release")), "ends": ref("value"), "warning": nullable(STR)},
                    optional=("later_release", "ends", "warning"))
    outcome = obj({
        "version": STR, "status": {"enum": ["resolves", "raises", "rejected"]}, "error": nullable(STR),
        "error_site": nullable(ref("site")), "replacements": array(obj({"typed": STR, "use": STR})),
        "retried": nullable({"$ref": "#/$defs/outcome"}),
        "decisive": array(obj({
            "kind": STR, "field": nullable(STR), "old": ref("value"), "new": ref("value"), "exc_type": nullable(STR),
            "message": nullable(STR), "site": ref("site"), "guards": array(obj({"expr": STR, "held": BOOL})),
            "site_change": obj({"change": STR, "aspects": STRS, "text": STR})})),
    })
    side = obj({**definitions()["site_record"]["properties"], "guards_normalized": STRS, "value_normalized": STR})
    return {
        "explain": ("sgtrace explain --json: the Trace, the verdict, the overrides (and --field, --fix, --replay)",
                    {**definitions()["explain"]}),
        "explain-error": ("sgtrace explain --error/--log --json: the sites the message matches, and whether these inputs produce it", obj({
            "schema": number["explain-error"],
            "observed": obj({"exc_type": nullable(STR), "message": STR}),
            "matches": array(obj({"site": ref("site_record"), "values": mapping(ANY), "exact": BOOL, "phase": STR, "loose": BOOL,
                                  "literal": INT, "total": INT})),
            "outside": nullable(obj({"phase": STR, "loose": BOOL, "conditions": STRS,
                                     "reads": array(obj({"kind": STR, "name": STR, "value": ANY, "origin": STR}))})),
            "consistent": nullable(BOOL),
            "conditional": STRS,
            "failing": nullable(obj({"expr": STR, "required": BOOL, "actual": ANY, "inputs": STRS})),
            "producers": array(obj({"description": STR, "argv": STRS})),
            "other_versions": STRS,
            "verdict": nullable(ref("verdict")),
        })),
        "fix": ("sgtrace fix --json: verified fixes, trade-offs and plausible fixes; for a launch that resolves, "
                "how to keep each value of yours SGLang overrides; with --field, how to decide each field named", obj({
            "schema": number["fix"], "resolves": BOOL, **definitions()["fixes"]["properties"],
            "keep": array(keep_item),
            "fields": mapping({"anyOf": [keep_item, obj({"final": ref("value")}, description="no write changed it")]}),
        }, optional=("keep", "fields", "later_release"))),
        "report": ("sgtrace report --format json: the report's facts and the Trace (as explain --json)", obj({
            "schema": number["report"],
            "report": obj({
                "schema": number["report"], "sgtrace_version": STR, "sglang_version": nullable(STR), "era": nullable(STR),
                "source": STR, "status": STR, "summary": STR, "profile": nullable(STR), "model_architecture": nullable(STR),
                "launch": obj({"origin": STR, "launcher": STR, "argv": STRS}), "command": STR, "env": mapping(STR), "fields": STRS,
                "rejection": nullable(obj({"message": STR, "hint": nullable(STR), "flags": array(obj({
                    "flag": STR, "version": STR, "since": nullable(STR), "last": nullable(STR), "removed": nullable(STR),
                    "deprecated_since": nullable(STR), "replacement": nullable(STR)}))})),
                "observed_error": nullable(obj({
                    "exc_type": nullable(STR), "message": STR, "sites": array(ref("site")), "phase": nullable(STR),
                    "consistent": nullable(BOOL), "conditional": STRS,
                    "failing": nullable(obj({"expr": STR, "required": BOOL, "actual": ANY, "inputs": STRS})),
                    "producers": array(obj({"description": STR, "argv": STRS}))})),
                "replay": nullable(obj({"version": STR, "where": STR, "how": {"enum": ["native", "emulated"]}, "profile": nullable(STR),
                                        "probes": array(ANY), "confirmed": BOOL, "differences": STRS})),
                "fixes": nullable(obj({"fixes": array(ref("report_candidate")), "trade_offs": array(ref("report_candidate"))})),
                "redacted": STRS,
            }),
            "trace": nullable(ref("explain")),
        })),
        "upgrade": ("sgtrace upgrade --json: each launch through each release, and the first change", obj({
            "schema": number["upgrade"], "releases": STRS, "notes": STRS,
            "launches": array(obj({
                "launch": STR, "argv": STRS,
                "releases": array(obj({
                    "release": STR, "outcome": {"enum": ["resolves", "raises", "refused"]}, "reason": nullable(STR),
                    "site": nullable(ref("site")),
                    "overrides": mapping(obj({"before": ANY, "after": ANY, "at": nullable(STR)})),
                    "override_changes": STRS,
                    "defaults_changed": mapping(obj({"before": ANY, "after": ANY, "at": nullable(STR)})),
                })),
                "first_change": nullable(obj({
                    "previous": STR, "release": STR, "before": STR, "after": STR, "difference": STRS,
                    "migrations": array(obj({"typed": STR, "use": STR})), "evidence": STRS, "retried": nullable(STR),
                    "patch": nullable(STR), "patch_file": nullable(STR),
                })),
            })),
        })),
        "diff": ("sgtrace diff --json: every change of flags, fields and sites, and with a launch how both versions resolve it", obj({
            "schema": number["diff"],
            "old": obj({"version": STR, "era": STR}),
            "new": obj({"version": STR, "era": STR}),
            "focus": array(obj({"old": nullable(STR), "new": nullable(STR)})),
            "renames": mapping(obj({"to": STR, "via": {"enum": ["alias", "inferred"]}, "evidence": STR})),
            "flags": array(obj({"option": STR, "change": STR, "dest_old": nullable(STR), "dest_new": nullable(STR), "old": ANY,
                                "new": ANY, "replacement": nullable(STR), "text": STR})),
            "fields": array(obj({"field": STR, "new_field": nullable(STR), "change": STR, "old": ref("value"), "new": ref("value"),
                                 "text": STR, "via": STR, "evidence": STR, "note": STR}, optional=("via", "evidence", "note"))),
            "sites": array(obj({"change": {"enum": ["added", "removed", "changed"]}, "aspects": STRS, "kind": STR,
                                "target": nullable(STR), "score": NUM, "old": nullable(side), "new": nullable(side),
                                "guards_removed": STRS, "guards_added": STRS, "text": STR})),
            "behaviour": nullable(obj({"argv": STRS, "old": {"$ref": "#/$defs/outcome"}, "new": {"$ref": "#/$defs/outcome"},
                                       "values": array(obj({"old_field": nullable(STR), "new_field": nullable(STR),
                                                            "old": ref("value"), "new": ref("value"), "differs": BOOL}))})),
        }), {"outcome": outcome}),
        "memory": ("sgtrace memory --json: SGLang's pool sizing run on the resolved arguments, each number with its site",
                   memory_document()),
        "sites": ("sgtrace sites --json: every site that writes the field or reads it", obj({
            "schema": number["sites"], "sglang_version": STR, "field": STR, "sites": array(ref("site_record"))})),
        "flags": ("sgtrace flags --json: the flag table as SGLang's argparse parser sees it", obj({
            "schema": number["flags"], "sglang_version": STR,
            "flags": array(obj({"option_strings": STRS, "dest": STR, "action": STR, "default": ANY, "default_src": nullable(STR),
                                "type": nullable(STR), "choices": nullable(array(ANY)), "nargs": ANY, "const": ANY, "required": BOOL,
                                "deprecated": BOOL, "replacement": nullable(STR), "generated": BOOL,
                                "location": nullable(STR)}))})),
        "graph": ("sgtrace graph --format json: the dataflow slice of a field", obj({
            "schema": number["graph"], "sglang_version": STR, "era": STR, "field": STR,
            "direction": {"enum": ["back", "forward", "both"]}, "sites": array(ref("site_record")),
            "nodes": array(obj({"id": STR, "kind": nullable(STR), "site": ref("site_record"), "file": nullable(STR),
                                "qualname": nullable(STR), "line": nullable(INT), "order": nullable(INT)},
                               optional=("site", "file", "qualname", "line", "order"))),
            "edges": array(obj({"from": STR, "to": STR, "kind": nullable(STR)}))})),
        "replay": ("sgtrace replay --json: the Trace SGLang's own code produced (or, when it failed, the error and the partial trace)",
                   {"anyOf": [obj({**trace_properties(), "schema": number["replay"], **replay_extras()}, optional=TRACE_OPTIONAL), ref("replay_failure")]}),
    }


def report_candidate() -> dict:
    return obj({"changes": array(obj({"kind": {"enum": ["set-flag", "drop-flag", "set-env", "drop-env"]}, "option": STR, "value": nullable(STR),
                                      "origin": STR})),
                "argv": STRS, "env": mapping(STR), "verified": BOOL, "outcome": STR, "trade_off": nullable(STR),
                "replayed": nullable(STR), "assumes": STRS, "note": STR})


def build(document: str) -> dict:
    """The complete schema of ``document``: its root, and the shared definitions it uses."""
    entry = documents()[document]
    title, root = entry[0], entry[1]
    extra = entry[2] if len(entry) > 2 else {}
    shared = {**definitions(), "report_candidate": report_candidate(), **extra}
    used = _used(root, shared)
    schema = {"$schema": DIALECT, "$id": f"{BASE_ID}{document}.json", "title": title, **root}
    if used:
        schema["$defs"] = {name: shared[name] for name in sorted(used)}
    return schema


def _used(schema: Any, shared: dict[str, dict]) -> set[str]:
    """The names of the definitions ``schema`` refers to, directly or through one another."""
    found: set[str] = set()
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            target = node.get("$ref")
            if isinstance(target, str) and target.startswith("#/$defs/"):
                name = target.rsplit("/", 1)[1]
                if name not in found:
                    found.add(name)
                    todo.append(shared[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return found


def text(document: str) -> str:
    return json.dumps(build(document), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    stale = []
    SCHEMA_DIR.mkdir(parents=True, exist_ok=True)
    for document in SCHEMA_NUMBERS:
        path, wanted = schema_path(document), text(document)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == wanted:
            continue
        stale.append(path.name)
        if not check:
            path.write_text(wanted, encoding="utf-8")
    if stale:
        print(("stale: " if check else "wrote: ") + ", ".join(stale) + (" (run python -m analyzer.schemas)" if check else ""))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
