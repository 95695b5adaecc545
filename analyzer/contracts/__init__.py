"""The contracts: plain data every layer reads, with ``to_dict``/``from_dict`` where it is cached or sent between
processes. ``extraction`` is what the libcst passes find in a tree (``Extraction``: fields, flags, sites, guards,
calls), ``trace`` what resolution did in either engine (``Trace``), ``launch`` a launch as an operator handed it
(``LaunchSpec``: argv with file:line origins, env). Nothing is imported here."""
