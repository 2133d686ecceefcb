# The rag service: the package and its runtime dependencies (no torch); compose.yaml runs it
# beside PostgreSQL with pgvector.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY rag ./rag
COPY sql ./sql
# Editable, so that the migrations in /app/sql stay where rag.db looks for them (beside the package).
RUN pip install -e .

RUN useradd --system --uid 10001 --home-dir /data rag && mkdir -p /data && chown rag /data
USER rag
ENV RAG_DATA_DIR=/data \
    RAG_HOST=0.0.0.0 \
    RAG_PORT=8000
EXPOSE 8000

# exec form: rag itself gets SIGTERM, shuts down gracefully and releases what it holds.
CMD ["rag", "serve"]
