"""Memory Portal app: views, CoreAPI client, markdown documents and audit."""
