"""rag: PostgreSQL-native, Czech-first question answering that knows when it does not know."""

__version__ = "0.1.0"
