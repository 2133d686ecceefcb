"""Documents into PostgreSQL: loaders, formats, chunking, the prepare step, the writer, bulk mode,
the embedding queue and reindexing.
"""
