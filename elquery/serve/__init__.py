"""``elquery serve``: the self-hosted linking and retrieval service (docs/serve.md)."""
