"""Every sentence the reports and the regression checks print, in one place.

Templates use ``{name}`` placeholders. :func:`analyzer.report.doc.fill` turns a
template and its values into inline parts (code spans, links), so the wording
lives here and the formatting in the renderers.
"""

from __future__ import annotations

from pathlib import Path

# -- a report's status ---------------------------------------------------------------------

RAISES = "raises"
MAY_RAISE = "may_raise"
RESOLVES = "resolves"
REJECTED = "rejected"

# -- titles and section headings --------------------------------------------------------

TITLE_RAISES = "sgtrace report: {exc_type} at start on SGLang {version}"
TITLE_MAY_RAISE = "sgtrace report: SGLang {version} may refuse these arguments"
TITLE_RESOLVES = "sgtrace report: how SGLang {version} resolves these arguments"
TITLE_REJECTED = "sgtrace report: SGLang {version} rejects the command line"

H_SUMMARY = "Summary"
H_ENVIRONMENT = "Environment"
H_ERROR = "Error"
H_CAUSE = "Cause: the conditions on the way to the raise"
H_FIXES = "Fixes"
H_DIAGRAM = "Chain diagram"
H_OVERRIDES = "Silent overrides"
H_GIVEN_OVERRIDES = "Arguments you gave that SGLang changed"
H_DEFAULT_OVERRIDES = "Defaults SGLang resolved (you did not set these)"
H_FIELDS = "Field chains"
H_WARNINGS = "Warnings SGLang logs on the way"
H_ALTERNATIVES = "Outcomes that depend on inputs sgtrace could not know"
H_REJECTION = "Rejected command line"
H_FLAG_HISTORY = "Flags this release does not know"
H_REPLAY = "Replay"
H_OBSERVED = "The error you saw"
H_NOTES = "Notes: what the evaluator assumed or could not know"
H_TRACE = "Full trace"

SUMMARY_TRACE = "Full trace: {events} event(s) in order"
SUMMARY_FINAL = "Final values of all {count} fields"
SUMMARY_FINAL_WRITTEN = "Final values of the {count} fields resolution wrote (every other field keeps your value or its default)"
TRACE_HEADER = ("#", "kind", "what", "where", "conditions")
MORE_CONDITIONS = "({count} outer condition(s) left out)"
SHORTENED = "Shortened to fit a GitHub issue; the {json} and {html} reports hold every condition and every final value."

# -- summary paragraph --------------------------------------------------------------------

SUM_SETTING = "On SGLang {version} ({profile}, model {model}), "
SUM_RAISES = "these arguments make the server fail at start: {exc_type} raised in {function} ({site}). "
SUM_MAY_RAISE = "these arguments may make the server fail at start, depending on inputs sgtrace could not know ({count} outcome(s) raise). "
SUM_RESOLVES = "these arguments resolve; the server gets past argument resolution. "
SUM_CHANGED_ON_WAY = "On the way SGLang itself set {fields}, which the conditions read. "
SUM_YOUR_FLAGS = "Your arguments that the conditions read: {flags}. "
SUM_CAUSE = "The decisive cause: {cause}. "
SUM_CAUSE_SGLANG = "{field} = {value}, set by SGLang at {site} in {function} (you did not set it), so {condition} is {held}; with {alternative} it does not raise"
SUM_CAUSE_ORDERING = "SGLang sets {field} = {alternative} only later, at {site} in {function}, after the check {condition}"
SUM_CAUSE_INPUT = "{input}, so {condition} is {held}; with {alternative} it does not raise"
SUM_CAUSE_NODE = ("{path} on the node, which sgtrace cannot see, taken as missing, so {condition} is false; where it is {what} "
                  "it does not raise ({assume})")
SUM_ALSO_DECISIVE = "Also decisive: {inputs}. "
SUM_VERIFIED_FIX = "Fix, verified by sgtrace's engine: {fix}. "
SUM_TRADE_OFF_FIX = "Fix, verified by sgtrace's engine, a trade-off that gives up one of the flags: {fix}. "
SUM_TRADE_OFF_ENV_FIX = "Fix, verified by sgtrace's engine, a trade-off that unsets or changes one of the env vars: {fix}. "
SUM_FIX_SKIPS_START_UP = "The engine ran it through argument resolution, not the start-up that follows; sgtrace fix runs that too. "
SUM_OVERRIDES = "SGLang silently overrode {given} argument(s) you gave and resolved {defaults} default(s). "
SUM_OVERRIDDEN_LIST = "Overridden: {fields}. "
SUM_SETTING_REJECTED = "On SGLang {version} ({profile}), "
SUM_REJECTED = "this command line never reaches argument resolution: SGLang's argument parser rejects it with {message}. "
SUM_FLAG_GONE = "{flag} was last in SGLang {last} and is gone from {removed}; use {replacement}. "
SUM_FLAG_GONE_NO_REPLACEMENT = "{flag} was last in SGLang {last} and is gone from {removed}. "
SUM_STORY_CHANGE = "{field} ({start} → {final} at {site})"
SUM_OVERRIDE_BRIEF = "{flag} {before} → {after}"
SUM_NO_PROFILE = "no hardware profile"
UNKNOWN = "unknown"
SUM_NOT_REPLAYED = "Not replayed: this is sgtrace's reading of SGLang's source."
SUM_CONFIRMED = "A replay through SGLang's own code confirmed it ({how}, {where})."
SUM_DISAGREES = "A replay through SGLang's own code disagrees ({how}, {where}); see Replay."

# -- environment table ----------------------------------------------------------------------

ENV_ROWS_HEADER = ("what", "value")
ENV_SGTRACE = "sgtrace"
ENV_SGLANG = "SGLang"
ENV_SOURCE = "source tree"
ENV_PROFILE = "hardware profile"
ENV_MODEL = "model architecture"
ENV_LAUNCHED = "launched from"
ERA = "{version} (era {era})"
NO_PROFILE = "none: every hardware probe is unknown"
NO_MODEL = "unknown: no config.json"
MODEL_NOT_READ = "not read: the command line was rejected first"
PROFILE_WORDS = "{name}: {gpu}, compute capability {cc}, {count} GPU(s)"

SOURCE_FETCHED = "PyPI wheel sglang=={version}"
SOURCE_INSTALLED = "installed package sglang {version}"
SOURCE_PATH = "local source tree {name} (SGLang {version}; links point at the v{version} release)"

# -- error, cause, fixes ---------------------------------------------------------------------

RAISED_AT = "raised at {site} in {function}"
CAUSE_HEADER = ("#", "condition", "outcome", "what drives it")
CAUSE_HELD = "held"
CAUSE_FAILED = "did not hold"
CAUSE_SKIPPED = "{count} branch(es) for other model architectures not taken"
CAUSE_NO_DRIVER = "a local value of the function"
FIX_VERIFIED = "verified"
FIX_COSTS = "costs: {cost}"
FIX_REPLAYED = "replay: {verdict}"
NO_FIX = "No change of one or two inputs that sgtrace tried makes resolution succeed."
TRADE_OFFS = "Trade-offs: these also resolve, but change or drop what you asked for:"

# -- overrides ----------------------------------------------------------------------------------

OVERRIDE_HEADER_GIVEN = ("flag", "you gave", "SGLang resolved", "where", "conditions")
OVERRIDE_HEADER_DEFAULT = ("field", "default", "SGLang resolved", "where", "conditions")
NO_GIVEN_OVERRIDES = "None: every argument you gave keeps its value."
NO_DEFAULT_OVERRIDES = "None."
ONLY_SOME_PATHS = "only on some outcomes"
WHEN = "when "

# -- field chains, warnings, alternatives -----------------------------------------------------

FIELD_FINAL = "{field} ends as {value}."
FIELD_GIVEN = "You gave {value} with {flag}."
FIELD_NOT_GIVEN = "You did not set it; it starts as {value}."
FIELD_NO_WRITE = "No write on the way: SGLang keeps it."
FIELD_WRITE = "{site} {function}: {old} → {new}"
ALTERNATIVE_RAISES = "raises {exc_type}: {message}"
ALTERNATIVE_RESOLVES = "resolves with {changes}"
ALTERNATIVE_IF = "if {condition}"
NO_CHANGE = "no change"
WARNING_ITEM = "{level} {message} ({site})"
EVENT_WRITE = "{field}: {old} → {new}"
EVENT_MESSAGE = "{kind} {message}"
SOME_OUTCOMES = " (some outcomes)"

# -- the diagram ----------------------------------------------------------------------------------

NODE_FLAG = "your {flag} {value}"
NODE_DEFAULT = "{field} = {value}\ndefault"
NODE_WRITE = "{function}\n{file}:{line}\n{field} = {value}"
NODE_ENV_SET = "env {name} = {value}\nyour environment"
NODE_ENV_DEFAULT = "env {name}\ndefault in environ.py"
NODE_HARDWARE = "hardware {probe}() = {value}\n{profile}"
NODE_MODEL = "model {architecture}"
NODE_CONDITION = "{number}. {expr}\n{outcome}"
NODE_RAISE = "{exc_type}\n{function}\n{file}:{line}"
NODE_FINAL = "{field} = {value}\nfinal"
NO_DIAGRAM = "No field chain to draw: no argument you gave was changed and no --field was asked for."

# -- rejection ---------------------------------------------------------------------------------------

REJECTED = "SGLang {version}'s argument parser refuses this command line, so the server never starts:"
REJECTED_HINT = "hint: {hint}"
FLAG_HISTORY_HEADER = ("flag", "last release with it", "gone from", "deprecated since", "replacement")
FLAG_UNKNOWN_SINCE = "No release between {since} and {version} has {flag}."
NO_SINCE = "Give --since VERSION (the release this command works on now) to trace when {flag} went away and what replaced it."

# -- an observed error (--error) ---------------------------------------------------------------------

OBS_NO_MATCH = "No raise, assert or log site of SGLang {version} matches this message."
OBS_OTHER_VERSIONS = "Releases in the cache whose sites match it: {versions}."
OBS_MATCH = "It matches the {exc_type} at {site} in {function}{partial}."
OBS_PARTIAL = " (a partial match of the message)"
OBS_OUTSIDE = "This site belongs to {phase}, outside what sgtrace evaluates: it is not held against these inputs."
OBS_LOOSE = "The template's own text explains too little of the message ({literal} of {total} characters) to hold the site against these inputs."
OBS_OUTSIDE_CONDITIONS = "The conditions on the way to it (innermost last):"
OBS_OUTSIDE_READS = "What they read, with these inputs:"
OBS_OUTSIDE_READ = "{name} = {value} ({kind}: {origin})"
OBS_CONSISTENT = "Consistent: these inputs reach that raise."
OBS_CONDITIONAL = "Consistent only if:"
OBS_INCONSISTENT = "Inconsistent: these inputs cannot produce this error."
OBS_NEEDS = "The raise needs {expr} to be {want} (at {site}), but with these inputs it is {have}:"
OBS_NOT_REACHED = "{function} is never reached with these inputs."
OBS_WRITES = "The writes that could change that, and why none applies here:"
OBS_WRITE = "{site} {function}: {field} = {value} when {when}"
TRUE = "true"
FALSE = "false"
NEVER_EVALUATED = "never evaluated"
OBS_PRODUCERS = "So the server that raised it did not get these arguments. Inputs that do produce it (verified):"
SUM_OBS_INCONSISTENT = "The error you saw ({exc_type}) cannot come from these arguments: the server that raised it did not get them. "
SUM_OBS_PRODUCER = "It does come from {producer} (verified). "
SUM_OBS_CONSISTENT = "The error you saw ({exc_type}) is the one these arguments reach. "

# -- replay ------------------------------------------------------------------------------------------

NOT_REPLAYED = "Not replayed. {replay} (or {replay_trace}) runs the same flags through SGLang's own code and compares."
REPLAY_CONFIRMED = "Confirmed: the replay through SGLang {version}'s own code agrees ({how}; ran in {where})."
REPLAY_DISAGREES = "The replay through SGLang {version}'s own code disagrees ({how}; ran in {where}):"
REPLAY_EMULATED = "emulated profile {profile}"
REPLAY_NATIVE = "native node: the real hardware answered"
REPLAY_PROBES = "{count} hardware probe(s) answered: {names}"
REPLAY_DIFF_ERROR = "error: predicted {predicted}, replay {replayed}"
REPLAY_DIFF_FIELD = "{field}: predicted {predicted}, replay {replayed}"
NO_ERROR = "none"
REPLAY_PARTIAL = "the replay stopped early: its trace is partial"

REDACTED_NOTE = "Redacted: {names}. Their values are written as {marker}; {flag} keeps them."

# -- footer ------------------------------------------------------------------------------------------

FOOTER = (
    "Generated by sgtrace {sgtrace} from SGLang {version}'s own source. Links point at the v{version} "
    "release on GitHub."
)

# -- regression checks -------------------------------------------------------------------------------

CHECK_OK_FINAL = "{field} = {expected}"
CHECK_BAD_FINAL = "{field}: expected {expected}, got {actual}"
CHECK_UNKNOWN_FINAL = "{field}: expected {expected}, but it depends on inputs sgtrace could not know ({actual})"
CHECK_NO_FIELD = "{field}: SGLang {version} has no such field (name its flag instead, e.g. \"--the-flag\", to follow a rename)"
CHECK_NO_FLAG = "{flag}: SGLang {version} has no such flag"
CHECK_OK_KEPT = "{field} is not overridden"
CHECK_BAD_KEPT = "{field} is overridden: {before} -> {after} at {site} in {function}"
CHECK_OK_NO_ERROR = "no error"
CHECK_BAD_NO_ERROR = "expected no error, got {exc_type}: {message}"
CHECK_MAY_RAISE = "expected no error, but it may raise {exc_type} if {condition}"
CHECK_OK_ERROR = "raises {exc_type} matching {match!r}"
CHECK_MISSING_ERROR = "expected {exc_type} matching {match!r}, but resolution succeeds"
CHECK_WRONG_ERROR = "expected {exc_type} matching {match!r}, got {actual_type}: {message}"
CHECK_REJECTED = "SGLang {version} rejects the launch: {message}."
CHECK_FLAG_GONE = "{flag} was last in SGLang {last} and is gone from {removed}; use {replacement}."
CHECK_REPLAY_PREFIX = "replay: "
CHECK_REPLAY_FAILED = "replay failed: {message}"
CHECK_SUMMARY_TITLE = "sgtrace check: {passed} passed, {failed} failed"
CHECK_TABLE_HEADER = ("expectation", "SGLang", "result", "checks", "first failure")
CHECK_PASS = "PASS"
CHECK_FAIL = "FAIL"


def source_words(tree) -> str:
    """Where the SGLang tree (an ``analyzer.sources.SourceTree``) came from, without machine-specific paths."""
    if tree.origin == "fetched":
        return SOURCE_FETCHED.format(version=tree.version)
    if tree.origin == "installed":
        return SOURCE_INSTALLED.format(version=tree.version)
    return SOURCE_PATH.format(name=Path(tree.root).name, version=tree.version)
