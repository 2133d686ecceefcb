"""The HTTP layer: create_app(), routes, schemas, problem details, authentication of API keys.
Nothing outside rag.api and rag.cli imports it.
"""
