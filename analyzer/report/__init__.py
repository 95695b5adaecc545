"""``sgtrace report``: a launch's explanation as a document for a bug ticket.

``build`` makes the ``Report`` (the explanation, the verdict, fixes, the replay) and writes it;
``sections`` says what the document shows, ``doc`` is the small document model that ``md`` and
``html`` write, ``mermaid`` draws the diagram, ``chain`` and ``flags`` tell a field's and a
flag's story, ``words`` holds the report's wording, ``replay_outcome`` the replay's part, and
``scenarios`` regenerates the example reports under ``reports/``. Nothing is imported here,
so that a section module can import its siblings without loading the whole report.
"""
