"""What sgtrace knows about SGLang by name, written once.

Every SGLang identifier the analyzer relies on is named in one of these modules, and only there:

* ``probes``: hardware probes (the names, the rule that answers each on a node, the recognizers).
* ``receivers``: the names that hold the server-args record, the module and class it is, and the calls that return a view of it.
* ``log_levels``: SGLang's logging calls and the level of the message each logs.
* ``defaults``: the default values that ask SGLang to pick (``auto``).
* ``flag_help``: what a flag's help says it is for (a testing bypass is no fix).
* ``intent``: what a fix gives up of what you asked for (the features an operator would not give up lightly).
* ``kinds``: the kinds of extracted sites and of Trace events (their JSON strings).
* ``read_calls``: the calls and names through which a condition reads an env var, the model's config or a probe.
* ``value_names``: how SGLang's messages spell some values of its settings (``FlashAttention3`` for ``fa3``).

The package imports nothing else from ``analyzer``: any layer may read it.
"""
