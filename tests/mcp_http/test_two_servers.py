"""Any worker answers any request: the two rounds of one elicitation, on two servers.

Two `gunicorn lifeproject.asgi:application` processes (the production
command) share the database and the SECRET_KEY, as hosts behind a load
balancer do; a round-robin balancer on loopback sends each new connection to
the next one. Round one (input_required) is answered by one server, the
retry by the other, which opens the sealed state and resolves afresh.
"""
from __future__ import annotations

from pathlib import Path

from lifeproject.embedded_radicale import free_port
from tests.mcp_http import wire
from tests.mcp_http.balancer import RoundRobin
from tests.mcp_http.conftest import start_asgi

OFFSITE = {"text": "Team offsite planning", "kind": "task"}


def test_two_servers__the_rounds_of_one_elicitation_on_different_servers(deployment, site):
    ports = [free_port(), free_port()]
    with RoundRobin(ports) as balancer:
        url = f"http://127.0.0.1:{balancer.port}"
        env = deployment.site_env(url)
        servers = [start_asgi(env, port=port, workers=1, log_dir=deployment.root / f"lb-{port}") for port in ports]
        try:
            mcp_url = url + "/mcp"
            token = deployment.mint_token("alice", resource=[mcp_url])
            chosen_before = len(balancer.chosen)
            first = wire.call(mcp_url, token, "resolve_reference", OFFSITE, elicitation=wire.FORM).json()["result"]
            options = first["inputRequests"]["pick"]["params"]["requestedSchema"]["properties"]["item_id"]["oneOf"]
            retry = wire.call(mcp_url, token, "resolve_reference", OFFSITE, elicitation=wire.FORM,
                              input_responses={"pick": {"action": "accept", "content": {"item_id": options[1]["const"]}}},
                              request_state=first["requestState"]).json()["result"]
            rounds = balancer.chosen[chosen_before:]
        finally:
            for server in servers:
                server.stop()
    # Read once both have stopped (gracefully: in-flight work finishes): a worker may write a request's line just
    # after the client has its answer, so a read right after the retry could miss the second server's line.
    logs = {port: [line for line in server.log_lines() if line.get("route") == "mcp"]
            for port, server in zip(ports, servers)}
    assert len(rounds) == 2 and rounds[0] != rounds[1]
    assert [line["envelope_status"] for line in logs[rounds[0]]] == ["needs_clarification"]
    assert [line["envelope_status"] for line in logs[rounds[1]]] == ["ok"]
    envelope = retry["structuredContent"]
    assert envelope["status"] == "ok" and envelope["data"]["method"] == "user_selected"
    assert envelope["data"]["item_id"] == options[1]["const"]
    # One request ID across both rounds and both servers: the one the state carried.
    assert logs[rounds[0]][0]["request_id"] == logs[rounds[1]][0]["request_id"] == envelope["request_id"]
