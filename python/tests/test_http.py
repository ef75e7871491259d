"""The Python answers equal the real server's and the CLI's.

Starts `target/release/grantmatch serve` on a copy of the session's data directory with
an unrestricted partner, then compares `Engine.match` with `POST /api/v1/matching`
(grant order, relevance_score, match_category, match_reason) and the catalogue
accessors with the GET endpoints (whole dicts). `grantmatch eval --json` is compared with
`grantmatch.evaluate`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import grantmatch
from conftest import EVAL_DIR, REPO, VARIANT, clean_env, free_port, json_request, stop_server

STARTUP_SECONDS = 120
ASSESSMENT_SECONDS = 600
QUALIFICATION_PROMPT = (
    "Programme, die gemeinnützige Vereine in Sachsen für Jugendarbeit und soziale "
    "Projekte nutzen können; keine Kredite."
)
# The partner's corrections to the reading (`--rules-file`): Thüringen besides Sachsen,
# and research ruled out.
QUALIFICATION_RULES = {"regions": ["Sachsen", "Thüringen"], "exclude_topics": ["Forschung"]}
CATEGORIES = [
    {"name": "Klimaschutz", "name_en": "Climate protection", "keywords": ["Klimaschutz", "CO2"]},
    {"name": "Digitalisierung", "name_en": "Digitalisation", "keywords": []},
]


class Server:
    def __init__(self, base: str, token: str, data: Path):
        self.base = base
        self.token = token
        self.data = data
        # A second partner with a qualification prompt and two categories.
        self.qualifier_token = ""
        self.categories: List[Dict[str, Any]] = []

    def request(
        self, method: str, path: str, body: Optional[Any] = None
    ) -> Tuple[int, Any]:
        return json_request(self.base, method, path, self.token, body)

    def get(self, path: str, **params: Any) -> Any:
        query = urllib.parse.urlencode(params, doseq=True)
        status, body = self.request("GET", path + ("?" + query if query else ""))
        assert status == 200, (path, params, status, body)
        return body

    def as_token(self, token: str) -> "Server":
        other = Server(self.base, token, self.data)
        return other

    def match(self, body: Dict[str, Any]) -> Tuple[int, Any]:
        """POST /matching, waiting while the model is still loading (503)."""
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            status, answer = self.request("POST", "/api/v1/matching", body)
            if status != 503 or time.monotonic() > deadline:
                return status, answer
            time.sleep(0.5)


def run_cli(binary: str, data_dir: Path, *args: str) -> str:
    out = subprocess.run(
        [binary, "--data-dir", str(data_dir), *args],
        env=clean_env(),
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.stdout.strip()


@pytest.fixture(scope="module")
def server(tmp_path_factory, data_dir, model_dir, cli_binary):
    data = tmp_path_factory.mktemp("server") / "data"
    shutil.copytree(Path(data_dir) / "catalogue", data / "catalogue")
    run_cli(cli_binary, data, "partner", "create", "--name", "pytest", "--tier", "starter")
    token = run_cli(
        cli_binary, data, "token", "create", "--partner", "pytest",
        "--scopes", "grants:read,matching:use,usage:read",
    )
    run_cli(cli_binary, data, "partner", "create", "--name", "qualifier", "--tier", "starter")
    qualifier_token = run_cli(
        cli_binary, data, "token", "create", "--partner", "qualifier", "--scopes", "grants:read"
    )
    prompt_file = data / "prompt.txt"
    prompt_file.write_text(QUALIFICATION_PROMPT, encoding="utf-8")
    rules_file = data / "rules.json"
    rules_file.write_text(json.dumps(QUALIFICATION_RULES), encoding="utf-8")
    run_cli(
        cli_binary, data, "partner", "qualification", "set",
        "--partner", "qualifier", "--prompt-file", str(prompt_file),
        "--rules-file", str(rules_file),
    )
    for c in CATEGORIES:
        run_cli(
            cli_binary, data, "partner", "category", "add", "--partner", "qualifier",
            "--name", c["name"], "--name-en", c["name_en"], "--keywords", ",".join(c["keywords"]),
        )
    categories = []
    for line in run_cli(cli_binary, data, "partner", "category", "list", "--partner", "qualifier").splitlines():
        # id, name, name_en, description, keywords (the last may be stripped when empty)
        cid, name, name_en, _description, *rest = line.split("\t")
        keywords = rest[0] if rest else ""
        categories.append(
            {"id": cid, "name": name, "name_en": name_en, "keywords": keywords.split(",") if keywords else []}
        )
    port = free_port()
    log = open(data / "server.log", "wb")
    proc = subprocess.Popen(
        [cli_binary, "--data-dir", str(data), "serve", "--addr", f"127.0.0.1:{port}"],
        env=clean_env(
            GRANTMATCH_MODEL_DIR=model_dir,
            GRANTMATCH_MODEL_VARIANT=VARIANT,
            GRANTMATCH_NO_RATE_LIMITS="true",
        ),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    srv = Server(f"http://127.0.0.1:{port}", token, data)
    srv.qualifier_token = qualifier_token
    srv.categories = categories
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server exited: {(data / 'server.log').read_text()}")
            try:
                with urllib.request.urlopen(srv.base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("the server did not start")
            time.sleep(0.2)
        yield srv
    finally:
        stop_server(proc, log)


def comparable(results):
    return [
        (r["grant_id"], r["relevance_score"], r["match_category"], r["match_reason"])
        for r in results
    ]


def test_match_equals_post_matching(server, engine, eval_requests):
    status, answer = server.match(next(iter(eval_requests.values())))
    if status == 404:
        pytest.skip("POST /api/v1/matching is not implemented by this server")
    assert status == 200, answer
    bodies = list(eval_requests.values())
    # a project given separately, an English profile and a bare description too
    sport = bodies[0]
    bodies.append({
        "organization_id": "pytest-extra",
        "organization_profile": {**sport["organization_profile"], "locale": "en"},
        "project": {"title": "Neue Flutlichtanlage", "budget": "80.000 EUR"},
    })
    bodies.append({
        "organization_id": "pytest-bare",
        "organization_profile": {"description": "Wir sind ein kleines Softwareunternehmen in Berlin."},
    })
    for body in bodies:
        status, answer = server.match(body)
        assert status == 200, answer
        ours = engine.match(body)
        assert answer["results_count"] == len(answer["results"]) == len(ours)
        assert comparable(ours) == comparable(answer["results"]), body["organization_id"]
        assert [r["title"] for r in ours] == [r["title"] for r in answer["results"]]
        assert [r["rank"] for r in ours] == [r["rank"] for r in answer["results"]]
    # the same input errors alike
    status, answer = server.match({"organization_id": "x", "organization_profile": {}})
    assert status == 400
    with pytest.raises(grantmatch.InvalidInputError) as e:
        engine.match({"organization_id": "x", "organization_profile": {}})
    assert answer["error"]["message"] in str(e.value)


def all_pages(server, path, key, **params):
    items, page = [], 1
    while True:
        body = server.get(path, page=page, per_page=100, **params)
        items += body[key]
        if page >= body["meta"]["total_pages"]:
            return items
        page += 1


PARTNER_ANNOTATIONS = ("ai_qualified", "ai_qualification_reasoning", "custom_categories")


def without_annotations(grant: dict) -> dict:
    """A grant of the API without the calling partner's own fields (which are null or
    empty here: this partner has no qualification prompt and no categories)."""
    assert grant["ai_qualified"] is None and grant["custom_categories"] == []
    return {k: v for k, v in grant.items() if k not in PARTNER_ANNOTATIONS}


def api_grants(server, **params) -> list:
    return [without_annotations(g) for g in all_pages(server, "/api/v1/grants", "grants", **params)]


def test_grants_equal_get_grants(server, engine):
    assert api_grants(server) == engine.grants()
    assert api_grants(server, q="Sportverein") == engine.grants("Sportverein")
    sachsen = next(r for r in engine.regions() if r["name"] == "Sachsen")
    area = next(a for a in engine.grant_areas() if a["is_parent"])
    filtered = api_grants(
        server,
        **{"region_ids[]": [sachsen["id"]], "grant_area_ids[]": [area["id"]], "grant_type": "subsidy"},
    )
    assert filtered == engine.grants(
        region_ids=sachsen["id"], grant_area_ids=area["id"], grant_type="subsidy"
    )
    for g in engine.grants(limit=5):
        detail = server.get(f"/api/v1/grants/{g['id']}")["grant"]
        assert without_annotations(detail) == engine.grant(g["slug"])


def test_vocabularies_equal_the_api(server, engine):
    assert server.get("/api/v1/regions", flat="true")["regions"] == engine.regions()
    assert server.get("/api/v1/grant_areas", flat="true", include_parent="true")[
        "grant_areas"
    ] == engine.grant_areas()
    assert server.get("/api/v1/eligible_entities")["eligible_entities"] == engine.eligible_entities()
    assert server.get("/api/v1/target_groups")["target_groups"] == engine.target_groups()
    providers = all_pages(server, "/api/v1/grant_providers", "grant_providers")
    assert providers == engine.providers()
    assert all_pages(server, "/api/v1/grant_providers", "grant_providers", q="bund") == engine.providers("bund")
    p = providers[0]
    assert server.get(f"/api/v1/grant_providers/{p['slug']}")["grant_provider"] == engine.provider(p["slug"])


def test_evaluate_equals_cli_eval(engine, eval_set, data_dir, model_dir, cli_binary):
    out = subprocess.run(
        [cli_binary, "--data-dir", data_dir, "--model-dir", model_dir,
         "--model-variant", VARIANT, "eval", "--dir", str(EVAL_DIR), "--json"],
        env=clean_env(), cwd=REPO, check=True, capture_output=True, text=True, timeout=600,
    )
    cli = json.loads(out.stdout)
    ours = grantmatch.evaluate(engine, *eval_set)
    assert ours["ndcg@10"] == pytest.approx(cli["summary"]["ndcg@10"], abs=1e-9)
    assert ours["recall@25"] == pytest.approx(cli["summary"]["recall@25"], abs=1e-9)
    for mine, theirs in zip(ours["per_profile"], cli["per_profile"]):
        assert mine["profile"] == theirs["profile"]
        assert mine["ndcg@10"] == pytest.approx(theirs["ndcg@10"], abs=1e-9)
        assert mine["recall@25"] == pytest.approx(theirs["recall@25"], abs=1e-9)


def test_import_equals_cli_import(tmp_path, engine, data_dir, model_dir, cli_binary):
    """`grantmatch import` over the same previous snapshot installs the same catalogue
    (records, derived labels re-classified by embeddings, vectors) as import_catalogue."""
    d = tmp_path / "data"
    shutil.copytree(Path(data_dir) / "catalogue", d / "catalogue")
    subprocess.run(
        [cli_binary, "--data-dir", str(d), "--model-dir", model_dir, "--model-variant", VARIANT,
         "import", str(REPO / "fixtures" / "catalogue")],
        env=clean_env(), check=True, capture_output=True, text=True, timeout=600,
    )
    cli = grantmatch.Engine.open(d, model_dir, model_variant=VARIANT)
    assert cli.snapshot_dir != engine.snapshot_dir
    assert cli.grants() == engine.grants()
    for g in engine.grants():
        assert cli.grant(g["id"]) == engine.grant(g["id"])
    ours, our_ids = engine.grant_embeddings()
    theirs, their_ids = cli.grant_embeddings()
    assert our_ids == their_ids and (ours == theirs).all()


def test_qualification_and_categories_equal_the_server(server, engine, cli_binary):
    """`Engine.qualify` / `Engine.categorize` give the decisions the server stored for a
    partner with the same prompt and categories, for every grant."""
    deadline = time.monotonic() + ASSESSMENT_SECONDS
    while True:
        status = json.loads(
            run_cli(cli_binary, server.data, "partner", "status", "--partner", "qualifier")
        )
        if status["pending"] == 0:
            break
        assert time.monotonic() < deadline, f"assessment did not finish: {status}"
        time.sleep(1)
    assert status["qualification"]["assessed"] == len(engine)
    assert status["rules"] == QUALIFICATION_RULES
    assert status["reading"]["regions"] == ["Sachsen", "Thüringen"]
    assert status["reading"]["exclude_topics"] == ["Forschung"]
    assert status["reading"]["excluded_funding_types"] == ["loan"]
    served = {
        g["id"]: g
        for g in all_pages(server.as_token(server.qualifier_token), "/api/v1/grants", "grants")
    }
    assert len(served) == len(engine)

    qualified = engine.qualify(QUALIFICATION_PROMPT, rules=QUALIFICATION_RULES)
    assert len(qualified) == len(engine)
    assert qualified != engine.qualify(QUALIFICATION_PROMPT), "the rules change decisions"
    for q in qualified:
        g = served[q["grant_id"]]
        assert (g["ai_qualified"], g["ai_qualification_reasoning"]) == (
            q["ai_qualified"],
            q["ai_qualification_reasoning"],
        ), q["slug"]
    n_qualified = sum(q["ai_qualified"] for q in qualified)
    assert n_qualified == status["qualified"]
    assert 0 < n_qualified < len(engine) // 4

    categorized = engine.categorize(server.categories)
    for c in categorized:
        assert served[c["grant_id"]]["custom_categories"] == c["custom_categories"], c["slug"]
    assigned = {cat["id"] for c in categorized for cat in c["custom_categories"]}
    assert assigned == {c["id"] for c in server.categories}

    # The first partner configured nothing: its grants carry null and empty fields.
    plain = server.get("/api/v1/grants", per_page=5)["grants"]
    assert all(g["ai_qualified"] is None and g["custom_categories"] == [] for g in plain)
