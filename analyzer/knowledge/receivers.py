"""The names that hold SGLang's server-args record, where its class lives, and the calls that return a view of it."""

from __future__ import annotations

import re

# The module of ``class ServerArgs`` (relative to the tree's root), and the class.
SERVER_ARGS_FILE = "sglang/srt/server_args.py"
SERVER_ARGS_CLASS = "ServerArgs"

# Names that hold the record in a condition's text: ``self.x``, ``server_args.x``, ``cfg.x`` ...
RECEIVERS = frozenset({"self", "server_args", "cfg", "view", "args", "sa"})
# Parameters that hold the record, by name (extraction; a method's ``self`` is found from its class,
# and ``args`` is left out: in SGLang a parameter named ``args`` is an argparse namespace).
RECEIVER_PARAMS = ("server_args", "view", "cfg", "sa", "resolved", "record")
# Attributes through which SGLang's other objects hold the record (the model runner's and the KV-cache
# configurator's ``self.server_args``).
HOLDER_ATTRS = ("server_args",)
# runtime_context's config-bag accessors (0.5.18 on): ``get_schedule().page_size`` and ``get_exec().mamba.x`` are
# leaves SGLang projects from the resolved record, named as its fields.
BAG_ACCESSORS = ("get_device", "get_model", "get_exec", "get_schedule", "get_memory", "get_spec", "get_lora", "get_mm",
                 "get_disagg", "get_serving", "get_observability")
# Calls that return a view of the record.
VIEW_CALLS = ("resolving_view", "resolved_view", "ResolvedView", "record_of", "get_server_args", "get_global_server_args")

_ALTERNATIVES = "|".join(sorted(RECEIVERS))
# ``self.`` (any receiver followed by a dot), to strip from a condition's text.
RECEIVER_DOT = re.compile(rf"\b(?:{_ALTERNATIVES})\.")
# ``self.name`` or ``self.name()``: group 1 the attribute, group 2 ``()`` for a helper method call.
RECEIVER_ATTR = re.compile(rf"\b(?:{_ALTERNATIVES})\.(\w+)(\(\))?")
# ``self.server_args.`` (an object's attribute that holds the record), to read as ``server_args.``.
HELD_RECORD = re.compile(r"\b\w+\.(%s)\." % "|".join(HOLDER_ATTRS))
# ``get_schedule().page_size`` / ``get_exec().mamba.enable_x``: a config-bag leaf (group 1: the path after the call).
BAG_LEAF = re.compile(r"\b(?:%s)\(\)((?:\.\w+)+)" % "|".join(BAG_ACCESSORS))
