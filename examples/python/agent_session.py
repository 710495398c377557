"""One agent session through compactor's HTTP API, with the standard library only.

Creates a session, appends a run of turns (a tool call and its result among them) with an
Idempotency-Key and resends it as a client would after a lost answer, loads the next request,
enqueues ``session.run.completed``, compacts now and waits, loads the smaller context, shows a
refused request, and deletes the session. Prints one JSON object of what it saw.

    COMPACTOR_API_URL=http://127.0.0.1:3100 COMPACTOR_API_TOKEN=... COMPACTOR_TENANT=acme \\
        python3 examples/python/agent_session.py
"""

from __future__ import annotations

import json
import os
import sys
import uuid

from compactor_client import Compactor, CompactorError


def turns(n: int) -> list[dict]:
    """``n`` rounds of a coding agent: a request, a tool call, its result, a reply."""
    out: list[dict] = []
    for i in range(n):
        call_id = f"toolu_{i:04d}"
        out.append({"role": "user", "content": f"Step {i}: run the tests in tests/test_parser_{i}.py"})
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Running tests/test_parser_{i}.py."},
                    {"type": "tool_use", "id": call_id, "name": "bash", "input": {"command": f"pytest tests/test_parser_{i}.py"}},
                ],
            }
        )
        out.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": f"{i + 3} passed in 0.{i}s"}],
            }
        )
        out.append({"role": "assistant", "content": f"All tests of step {i} pass."})
    return out


def main() -> int:
    api = Compactor(
        os.environ["COMPACTOR_API_URL"],
        token=os.environ["COMPACTOR_API_TOKEN"],
        tenant=os.environ["COMPACTOR_TENANT"],
    )
    session = f"py-{uuid.uuid4().hex[:8]}"
    seen: dict = {"session": session}

    created = api.create_session(
        session,
        messages=[{"role": "system", "content": "You are a careful coding agent.", "pinned": True}],
        context_window=200_000,
    )
    seen["created"] = created["messageCount"]
    tools = [{"name": "bash", "description": "run a command", "input_schema": {"type": "object"}}]
    seen["tools_declared"] = api.set_tools(session, tools)["tools"] == tools

    key = str(uuid.uuid4())
    first = api.append(session, turns(8), idempotency_key=key)
    again = api.append(session, turns(8), idempotency_key=key)  # a resend after a lost answer
    seen["appended"] = len(first["seqs"])
    seen["resend_same_answer"] = first == again

    before = api.context(session)
    seen["messages_before"] = len(before["messages"])

    seen["enqueued"] = api.run_completed(session)["jobId"] != ""

    outcome = api.compact(session, wait_ms=20_000, strategy={"type": "slidingWindow", "maxMessages": 6})
    seen["compact_state"] = outcome["state"]
    seen["compact_status"] = outcome.get("result", {}).get("status")

    after = api.context(session)
    seen["messages_after"] = len(after["messages"])
    seen["version_after"] = after["version"]
    roles = [m["role"] for m in after["messages"]]
    seen["alternates"] = all(a != b for a, b in zip(roles, roles[1:])) and roles[:1] == ["user"]
    # The reply made from this context is appended with its version.
    api.append(session, [{"role": "user", "content": "Now fix the parser."}], context_version=after["version"])

    try:
        api.append(session, [{"role": "user", "content": [{"type": "tool_result"}]}])
    except CompactorError as error:
        seen["refused"] = {"status": error.status, "type": error.type, "field": error.field}

    seen["deleted"] = api.delete_session(session)["sessions"]
    try:
        api.context(session)
    except CompactorError as error:
        seen["after_delete"] = error.status

    print(json.dumps(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
