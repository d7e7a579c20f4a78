"""The annotator benchmark's peers (``annotate_load.py --peer NAME``): the closed loop of
``annotate_closed.py`` through another tool's REST API, against its server already running on this
machine, its CPU read from /proc the same way as Concord's."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import time
import uuid
from typing import Any

from bench.annotate_closed import CLOSED_WARMUP_LABELS, report_closed, run_closed
from bench.annotate_harness import (
    HTTP_TIMEOUT_S,
    USER_PREFIX,
    Annotator,
    Client,
    HttpError,
    print_host_speed,
    process_tree,
)

PEERS = ("doccano",)
PEER_PASSWORD = "bench-annotate-peer-password"
PEER_LABELS = ("0", "1", "2")
#: What a doccano label costs its client (``--peer-requests``): ``one`` request (the category's POST,
#: the annotator's example ids listed once at set-up, not measured), or the two its annotation page
#: sends (``ui``: the next example's GET, then the POST).
PEER_REQUESTS = ("one", "ui")


class DoccanoPeer:
    """doccano (1.8.4) driven through its REST API, with the calls its annotation page makes.

    Set-up, as its admin (not measured): a text-classification project of ``examples`` short texts,
    one category type per score, and ``annotators`` accounts with the annotator role, each signed in
    once for a token. A label is then two requests, since doccano answers a label with the label
    alone: ``GET /v1/projects/<id>/examples?limit=1&offset=<n>`` (the annotator's next example, as
    its page fetches one) and ``POST /v1/projects/<id>/examples/<example>/categories``. With
    ``requests="one"`` each annotator lists the project's example ids once at set-up and a label is
    the POST alone: the server's least work per label. Every annotator labels the examples in order
    (doccano has no assignment of items to people).
    """

    def __init__(self, url: str, user: str, password: str, requests: str = "ui") -> None:
        found = re.fullmatch(r"http://(127\.0\.0\.1|localhost):(\d+)/?", url)
        if found is None:
            raise SystemExit("--peer-url must be http://127.0.0.1:PORT (a server on this machine)")
        self.host, self.port = found.group(1), int(found.group(2))
        self.user, self.password = user, password
        self.requests = requests
        self.admin = ""
        self.project_id = 0
        self.label_ids: list[int] = []
        #: Each annotator's example ids in labelling order (``requests="one"``), by username.
        self.example_ids: dict[str, list[int]] = {}

    def call(self, method: str, path: str, token: str = "", body: Any = None) -> tuple[int, Any]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=HTTP_TIMEOUT_S * 3)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Token {token}"
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        return response.status, (json.loads(data) if data and data[:1] in (b"{", b"[") else None)

    def login(self, username: str, password: str) -> str:
        status, answer = self.call("POST", "/v1/auth/login/", body={"username": username, "password": password})
        if status != 200 or not answer or "key" not in answer:
            raise SystemExit(f"doccano: signing in as {username} answered HTTP {status}: {answer}")
        return answer["key"]

    def setup(self, *, annotators: int, examples: int) -> list[Annotator]:
        admin = self.login(self.user, self.password)
        project = {
            "name": f"bench-annotate-{uuid.uuid4().hex[:8]}", "description": "Workspace load benchmark",
            "project_type": "DocumentClassification", "resourcetype": "TextClassificationProject",
            "guideline": "", "random_order": False, "collaborative_annotation": False,
            "single_class_classification": True,
        }  # fmt: skip
        status, answer = self.call("POST", "/v1/projects", admin, project)
        if status != 201:
            raise SystemExit(f"doccano: creating the project answered HTTP {status}: {answer}")
        self.project_id = answer["id"]
        base = f"/v1/projects/{self.project_id}"
        for text in PEER_LABELS:
            status, answer = self.call(
                "POST",
                f"{base}/category-types",
                admin,
                {"text": text, "background_color": "#2196f3", "text_color": "#ffffff"},
            )
            if status != 201:
                raise SystemExit(f"doccano: creating a label answered HTTP {status}: {answer}")
            self.label_ids.append(answer["id"])
        rng = random.Random(0)
        words = ["the", "user", "asks", "why", "the", "answer", "helps", "them", "decide", "what", "to", "do"]
        for number in range(examples):
            text = f"{number}: " + " ".join(rng.choice(words) for _ in range(40))
            status, answer = self.call("POST", f"{base}/examples", admin, {"text": text, "meta": {}})
            if status != 201:
                raise SystemExit(f"doccano: creating an example answered HTTP {status}: {answer}")
        status, roles = self.call("GET", "/v1/roles", admin)
        annotator_role = next(role["id"] for role in roles if role["name"] == "annotator")
        people = []
        for number in range(annotators):
            name = f"{USER_PREFIX}{number:05d}"
            account = {"username": name, "email": f"{name}@example.org", "password1": PEER_PASSWORD,
                       "password2": PEER_PASSWORD}  # fmt: skip
            self.call("POST", "/v1/users/create", admin, account)  # 400 when kept from an earlier run
            status, found = self.call("GET", f"/v1/users?q={name}", admin)
            user_id = next(user["id"] for user in found if user["username"] == name)
            status, answer = self.call("POST", f"{base}/members", admin, {"user": user_id, "role": annotator_role})
            if status != 201:
                raise SystemExit(f"doccano: adding {name} to the project answered HTTP {status}: {answer}")
            people.append(Annotator(name, token=self.login(name, PEER_PASSWORD)))
        if self.requests == "one":
            for person in people:
                status, answer = self.call("GET", f"{base}/examples?limit={examples}&offset=0", person.token)
                if status != 200 or len(answer["results"]) != examples:
                    raise SystemExit(f"doccano: listing the examples answered HTTP {status}: {answer}")
                self.example_ids[person.username] = [int(example["id"]) for example in answer["results"]]
        self.admin = admin
        return people

    def teardown(self) -> None:
        if self.project_id:
            self.call("DELETE", "/v1/projects", self.admin, {"ids": [self.project_id]})

    def next_item(self, client: Client, annotator: Annotator) -> None:
        if self.requests == "one":  # the ids were listed at set-up: no request
            ids = self.example_ids[annotator.username]
            if annotator.labelled >= len(ids):
                annotator.done, annotator.assignment_id = True, None
            else:
                annotator.assignment_id = ids[annotator.labelled]
            return
        path = f"/v1/projects/{self.project_id}/examples?limit=1&offset={annotator.labelled}"
        status, body = client.send(annotator, "GET", path, headers={"Authorization": f"Token {annotator.token}"})
        if status != 200:
            raise HttpError(f"HTTP {status}")
        results = json.loads(body)["results"]
        if not results:
            annotator.done, annotator.assignment_id = True, None
            return
        annotator.assignment_id = int(results[0]["id"])

    def submit(self, client: Client, annotator: Annotator, rng: random.Random, factors: tuple[str, ...]) -> None:
        path = f"/v1/projects/{self.project_id}/examples/{annotator.assignment_id}/categories"
        body = json.dumps({"label": rng.choice(self.label_ids)})
        headers = {"Authorization": f"Token {annotator.token}", "Content-Type": "application/json"}
        status, _ = client.send(annotator, "POST", path, body, headers)
        if status != 201:
            raise HttpError(f"HTTP {status}")
        annotator.labelled += 1
        annotator.assignment_id = None  # doccano answers the label alone: the next example is looked up


def load_peer(args: argparse.Namespace) -> None:
    """The closed-loop workload against a peer already serving on this machine (``--peer-url``),
    its server's CPU read from /proc for ``--peer-pid`` and that process's workers."""
    print(
        f"peer: {args.peer} at {args.peer_url} (server pid {args.peer_pid}), {args.peer_requests} request(s) "
        f"per label; load average {os.getloadavg()[0]:.2f}"
    )
    print_host_speed()
    peer = DoccanoPeer(args.peer_url, args.peer_user, args.peer_password, args.peer_requests)
    started = time.perf_counter()
    examples = CLOSED_WARMUP_LABELS + args.labels_per_client + 1
    annotators = peer.setup(annotators=args.threads_client, examples=examples)
    print(f"set up {len(annotators)} annotators and {examples} examples in {time.perf_counter() - started:.1f} s")
    client = Client(peer.port)
    try:
        run = run_closed(
            client, annotators, labels_each=args.labels_per_client, next_fn=peer.next_item, submit_fn=peer.submit,
            server_pids=lambda: process_tree(args.peer_pid), factors=(),
        )  # fmt: skip
    finally:
        peer.teardown()
    report_closed(run, f"{args.peer}-{args.peer_requests}")
