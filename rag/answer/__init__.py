"""Answering a question: the Engine (rewrite, search, judge, answer), result types, the LLM client,
follow-up rewriting and prompts.
"""
