"""The datasets elquery uses: a registry, robust downloads, verification (``elquery data``)."""
