"""The service's request models under fuzzing (issue 31): any JSON value in any field of
``/link``, ``/rank``, ``/tag``, ``/spot`` (and any bytes as a body, any query string, any NIF
document) is answered 2xx or 4xx, never 5xx; a 4xx is the one error shape ``{"error": "<one
line>"}``; and the next request on the same kept-alive connection is answered as before. Against
a real ``elquery serve`` (the ``served`` fixture), whose log must hold no traceback."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elquery.serve.schema import LINKING_PARAMETERS

from served_http import Answer, Connection, Served, served  # noqa: F401  # served: the fixture (tests/serve is on the path)

TEXT = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=20)  # lone surrogates too
NUMBERS = st.integers() | st.floats() | st.sampled_from([0, 1, 2, 1000, 1001, -1, 0.5, 1e400, 2**63, 10**30])
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT | st.sampled_from(["obama", "new york pizza", "bm25", "mlm",
                                                                          "sdm", "mlm-elr", "sdm-elr", "tagme", "k1=0.9",
                                                                          "true", "1", "<dbpedia:Rome>", "q1", "entity",
                                                                          "score"])
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                           max_leaves=10)
FIELDS = ["q", "qid", "queries", "text", "lang", "model", "k", "params", "links", "method", "top_ranked",
          *LINKING_PARAMETERS]
DOORS = ["/link", "/rank", "/tag", "/spot"]
VALID = "/link?q=new+york+pizza+manhattan"
SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def connection(served: Served) -> Any:
    connection = Connection(served.port)
    baseline = connection.request("GET", VALID)
    assert baseline.status == 200
    yield connection, baseline.body
    connection.close()
    log = served.log()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]


def answered_and_still_open(connection: Any, method: str, target: str, body: bytes | None,
                            content_type: str = "application/json") -> Answer:
    """Send one request; its answer is 2xx or a 4xx in the error shape; then the valid request on
    the same connection gets the same answer as before."""
    open_connection, valid = connection
    answer = open_connection.request(method, target, body, content_type)
    assert 200 <= answer.status < 300 or 400 <= answer.status < 500, (method, target, body, answer)
    if answer.status >= 400:
        error = answer.json()
        assert list(error) == ["error"] and isinstance(error["error"], str) and "\n" not in error["error"], error
    assert open_connection.request("GET", VALID).body == valid
    return answer


@SETTINGS
@given(door=st.sampled_from(DOORS), values=st.dictionaries(st.sampled_from(FIELDS) | TEXT, JSON_VALUES, max_size=5),
       query=st.sampled_from(["obama", "new york pizza", None]))
def test_any_json_value_in_any_field(connection: Any, door: str, values: dict[str, Any], query: str | None) -> None:
    if query is not None:  # most requests carry a valid query, so the other fields are reached
        values = {"text" if door in ("/tag", "/spot") else "q": query, **values}
    body = json.dumps(values, allow_nan=True).encode()  # surrogates as \ud800 escapes; NaN and Infinity too
    answered_and_still_open(connection, "POST", door, body)


@SETTINGS
@given(door=st.sampled_from(DOORS), body=st.binary(max_size=300) | JSON_VALUES.map(lambda v: json.dumps(v).encode()),
       content_type=st.sampled_from(["application/json", "application/x-www-form-urlencoded", "text/plain"]))
def test_any_body(connection: Any, door: str, body: bytes, content_type: str) -> None:
    answered_and_still_open(connection, "POST", door, body, content_type)


@SETTINGS
@given(door=st.sampled_from([*DOORS, "/entity/", "/nope/"]),
       pairs=st.lists(st.tuples(st.sampled_from(FIELDS) | TEXT, SCALARS.map(str)), max_size=5),
       method=st.sampled_from(["GET", "GET", "POST", "PUT", "DELETE", "PATCH"]))
def test_any_query_string_and_method(connection: Any, door: str, pairs: list[tuple[str, str]], method: str) -> None:
    def encoded(text: str) -> str:
        return quote(text.encode("utf-8", "surrogatepass"), safe="")  # bytes that are not UTF-8 too

    if door.endswith("/"):
        target = door + encoded(pairs[0][1] if pairs else "x")
    else:
        target = door + "?" + "&".join(f"{encoded(name)}={encoded(value)}" for name, value in pairs)
    answered_and_still_open(connection, method, target, b"" if method != "GET" else None)


@SETTINGS
@given(document=st.binary(max_size=300) | TEXT.map(lambda t: f'<http://x#char=0,5> <http://persistence.uni-leipzig.org/'
                                                      f'nlp2rdf/ontologies/nif-core#isString> "{t}" .'.encode(
                                                          "utf-8", "surrogatepass")),
       method=st.sampled_from(["mlmcg", "cmns", "tagme", "nope"]))
def test_any_nif_document(connection: Any, document: bytes, method: str) -> None:
    answered_and_still_open(connection, "POST", f"/nif?method={method}", document, "text/turtle")


LINK = st.dictionaries(st.sampled_from(["entity", "score"]) | TEXT, JSON_VALUES | st.sampled_from(
    ["<dbpedia:Rome>", "Barack_Obama", "dbpedia:Manhattan"]), max_size=3)


@SETTINGS
@given(model=st.sampled_from(["mlm-elr", "sdm-elr", "fsdm-elr", "mlm"]),
       links=st.lists(LINK, max_size=3) | st.dictionaries(st.sampled_from(["q1", "a"]) | TEXT, st.lists(LINK, max_size=3)
                                                          | JSON_VALUES, max_size=3) | JSON_VALUES,
       batch=st.booleans())
def test_any_links_of_an_elr_ranking(connection: Any, model: str, links: Any, batch: bool) -> None:
    queries = {"queries": {"a": "obama mother", "b": "rome"}} if batch else {"q": "obama mother"}
    body = json.dumps({**queries, "model": model, "links": links, "k": 5}, allow_nan=True).encode()
    answered_and_still_open(connection, "POST", "/rank", body)
