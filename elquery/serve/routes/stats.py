"""``/health``, ``/ready`` and ``/stats``: liveness; whether this worker has warmed up
(:mod:`elquery.serve.warm_up`) and what its warm-up did; the served artefacts (the LTR model's
metadata too), limits, thresholds and request statistics."""

from __future__ import annotations

import os
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from elquery.serve.service import Routes, service_of

routes = Routes()


@routes.route("/health", "GET")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@routes.route("/ready", "GET")
async def ready(request: Request) -> JSONResponse:
    """200 once this worker has warmed up (what the warm-up did under ``warm_up``), 503 before."""
    warmed = service_of(request).artefacts.warmed
    if warmed is None:
        return JSONResponse({"ready": False, "worker": os.getpid()}, status_code=503)
    return JSONResponse({"ready": True, "worker": os.getpid(), "warm_up": warmed.as_dict()})


@routes.route("/stats", "GET")
async def stats(request: Request) -> dict[str, Any]:
    service = service_of(request)
    artefacts = service.artefacts
    return {"worker": os.getpid(), "index": {"path": str(artefacts.index), "entities": artefacts.entity_index.num_entities,
                      "metadata": artefacts.entity_index.metadata},
            "surface_forms": {"path": str(artefacts.surface_forms), "meta": artefacts.store.meta},
            "tagme": None if artefacts.tagme is None else str(artefacts.tagme), "model": artefacts.model_info,
            "provenance": artefacts.provenance, "limits": service.limits.__dict__,
            "params": None if artefacts.params is None else str(artefacts.params.path),
            "thresholds": artefacts.thresholds(), **service.statistics.as_dict()}
