"""ctxls: what an AI coding agent loads into its context window."""

__version__ = "0.1.0"
