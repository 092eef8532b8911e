"""The service's routers, one module per door: /link, /rank, /tag and /spot, /entity/ID, /nif,
/health and /stats, and the page at /. Each builds its answers from the shared
:mod:`elquery.serve.service`; :func:`elquery.serve.app.create_app` includes them in this order."""
