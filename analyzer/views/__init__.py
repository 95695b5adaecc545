"""What a command prints: one module per command's text (``explain``, ``verdict``, ``diagnose``,
``diff``, ``replay``), each rendering the plain data a command built (an ``Explanation``, a
``Trace``, a comparison) and nothing else. Nothing is imported here."""
