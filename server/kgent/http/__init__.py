"""The HTTP + SSE front (`kgent serve --http`): FastAPI routes over the shared service, SSE event streams with
replay, approvals any authorised client may answer, and the web client (static/) served at `/`."""
