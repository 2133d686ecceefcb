"""The `rag` command: one module per command group, registered on the group in rag.cli.main with
add_command.
"""
