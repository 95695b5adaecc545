"""sgtrace: source-tracing diagnostics for SGLang server arguments."""

__version__ = "0.1.0"
