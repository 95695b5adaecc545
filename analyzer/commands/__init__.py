"""What the commands do, apart from their options and their output: ``explain`` (a launch through the
engine, its overrides and cause), ``verdict`` (the decisive causes and the verified fix), ``field_why``,
``guard_reads``, ``diagnose`` (a pasted error against its site), ``fix``, ``keep_fix`` and
``keep_replay``, ``check`` (expectation files), ``diff``, ``upgrade``, ``compare`` (a symbolic Trace
against a replayed one), ``agreement`` (the two engines over the scenario matrix), ``corpus``,
``corpus_fixes`` and ``corpus_soundness`` (the real cases), ``graph``. ``cli/`` reads a command's options
and calls these; ``views/`` and ``report/`` print what they return. Nothing is imported here."""
