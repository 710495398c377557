"""A client of compactor's HTTP API on the Python standard library only.

The contract is the API's OpenAPI 3.1 document (``GET /v1/openapi.json``), generated from the same
zod schemas the server validates with; this module is a thin, typed-by-docstring wrapper around
it. Every call sends the credential as a bearer token and names the tenant in the
``Compactor-Tenant`` header (a tenant token may only name its own; the admin token any).

Usage::

    from compactor_client import Compactor

    api = Compactor("http://127.0.0.1:3100", token="...", tenant="acme")
    api.create_session("session-42", messages=[{"role": "system", "content": "Be careful.", "pinned": True}])
    api.append("session-42", [{"role": "user", "content": "Fix the parser."}])
    context = api.context("session-42")      # {"system", "messages", "tokens", "sessionId", "version", ...}
    api.run_completed("session-42")          # enqueue session.run.completed
    outcome = api.compact("session-42", wait_ms=30_000)   # {"state": "settled" | "running" | "failed", ...}
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Optional

__all__ = ["Compactor", "CompactorError"]


class CompactorError(Exception):
    """An answer other than 2xx, or no answer at all.

    Attributes:
        status: the HTTP status (0 when the server could not be reached).
        type: the error type of the API's body (``invalid_request_error``, ``not_found_error``,
            ``idempotency_error``, ``request_too_large``, ...), or ``connection_error``.
        field: the request field the error names (``messages[2].content``), when it names one.
    """

    def __init__(self, status: int, type: str, message: str, field: Optional[str] = None):
        super().__init__(f"{status} {type}: {message}")
        self.status = status
        self.type = type
        self.message = message
        self.field = field


class Compactor:
    """compactor's HTTP API.

    Args:
        base_url: where ``compactor api`` listens, e.g. ``http://127.0.0.1:3100`` (a path prefix
            is kept, for an API mounted under one).
        token: a tenant token of ``COMPACTOR_DASHBOARD_TOKENS``, or the admin token.
        tenant: the tenant to act on (a tenant token's own tenant, or any with the admin token).
        timeout_s: seconds to wait for each answer (a compaction's ``wait`` is added to it).
        retries: how many times to resend a request that got no answer or a 502/503/504. Only
            requests that are safe to repeat are resent: reads, deletes, events (their eventId is
            their idempotency key) and appends (each carries an Idempotency-Key).
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        tenant: str,
        timeout_s: float = 30.0,
        retries: int = 2,
    ):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.tenant = tenant
        self.timeout_s = timeout_s
        self.retries = retries

    # -- sessions and messages -------------------------------------------------------------------

    def create_session(
        self,
        session_id: str,
        messages: Optional[list[dict[str, Any]]] = None,
        agent_id: Optional[str] = None,
        context_window: Optional[int] = None,
    ) -> dict[str, Any]:
        """Creates a session with its first messages (seqs 0, 1, ...).

        ``messages`` are Anthropic MessageParams (``{"role", "content"}``; role ``system`` for a
        system prompt, ``"pinned": True`` to keep it through every compaction).
        ``context_window`` is the model's window in tokens. Returns
        ``{"sessionId", "messageCount", "tokenCount"}``. Raises CompactorError 409 when it exists.
        Not resent on a lost answer: creating twice is refused, so a retry would hide the outcome.
        """
        body: dict[str, Any] = {"id": session_id}
        if messages is not None:
            body["messages"] = messages
        if agent_id is not None:
            body["agentId"] = agent_id
        if context_window is not None:
            body["contextWindow"] = context_window
        return self._request("POST", "/v1/sessions", body=body, retry=False)

    def append(
        self,
        session_id: str,
        messages: list[dict[str, Any]],
        idempotency_key: Optional[str] = None,
        context_version: Optional[int] = None,
    ) -> dict[str, Any]:
        """Appends MessageParams, stored exactly; returns ``{"sessionId", "seqs"}``.

        ``sessionId`` is where they went: after a newSession compaction, the live session the
        named one continued in (append there next). Every call carries an Idempotency-Key (a new
        UUID unless given), so a resend after a lost answer appends nothing and gets the first
        answer back. ``context_version`` is the ``version`` of the context the reply among these
        messages was made from.
        """
        body: dict[str, Any] = {"messages": messages}
        if context_version is not None:
            body["contextVersion"] = context_version
        headers = {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}
        return self._request(
            "POST", f"/v1/sessions/{_quote(session_id)}/messages", body=body, headers=headers
        )

    def context(
        self,
        session_id: str,
        thinking: Optional[str] = None,
        compaction_block: Optional[str] = None,
    ) -> dict[str, Any]:
        """The next request: ``{"system", "messages", "tokens", "sessionId", "notices", "version", "betas"}``.

        ``system`` and ``messages`` go to the Messages API as they are, with the ``anthropic-beta``
        header naming ``betas`` when it is not empty (an anthropic-compaction summary is Anthropic's
        ``compaction`` block). ``thinking="strip"`` leaves thinking blocks out;
        ``compaction_block="text"`` sends the readable checkpoint instead of the block. Raises
        CompactorError 404 for an unknown session.
        """
        query: dict[str, str] = {}
        if thinking:
            query["thinking"] = thinking
        if compaction_block:
            query["compactionBlock"] = compaction_block
        return self._request("GET", f"/v1/sessions/{_quote(session_id)}/context", query=query or None)

    def set_tools(self, session_id: str, tools: Optional[list[dict[str, Any]]]) -> dict[str, Any]:
        """Declares the tools the agent sends with this session's requests (exactly as sent), or
        clears them with ``None``. The anthropic-compaction summarizer sends them on its
        compaction request, which kept turns need to keep their thinking."""
        return self._request(
            "PUT", f"/v1/sessions/{_quote(session_id)}/tools", body={"tools": tools}, retry=False
        )

    def delete_session(self, session_id: str) -> dict[str, Any]:
        """Deletes the session, its lineage and everything held of them; returns counts per table."""
        return self._request("DELETE", f"/v1/sessions/{_quote(session_id)}")

    # -- compaction ------------------------------------------------------------------------------

    def run_completed(
        self,
        session_id: str,
        event_id: Optional[str] = None,
        trigger: str = "event",
        **fields: Any,
    ) -> dict[str, Any]:
        """Enqueues ``session.run.completed``; returns ``{"jobId", "coalesced"}``.

        ``event_id`` (a new UUID unless given) is the job id and idempotency key: a resend is a
        no-op. ``fields`` are the event's other fields, in its own casing (``agentId``,
        ``strategy``, ``inputTokens``, ...).
        """
        body = {
            "eventId": event_id or str(uuid.uuid4()),
            "tenantId": self.tenant,
            "sessionId": session_id,
            "trigger": trigger,
            **fields,
        }
        return self._request("POST", "/v1/events/run-completed", body=body)

    def compact(
        self, session_id: str, wait_ms: int = 0, strategy: Optional[dict[str, Any]] = None
    ) -> dict[str, Any]:
        """Compacts now, for an agent about to overflow its window.

        Waits up to ``wait_ms`` (at most 60,000) for a worker to settle the compaction. Returns
        ``{"state": "settled", "jobId", "result", "compaction"}`` (the job's result and its ledger
        row), ``{"state": "running", "jobId"}`` when the wait ended first (the job goes on), or
        ``{"state": "failed", "jobId", "error"}``.
        """
        body = {"strategy": strategy} if strategy is not None else {}
        return self._request(
            "POST",
            f"/v1/sessions/{_quote(session_id)}/compact",
            query={"wait": str(wait_ms)} if wait_ms else None,
            body=body,
            extra_timeout_s=wait_ms / 1000,
            # Resending would enqueue a second manual compaction: the first may be running.
            retry=False,
        )

    def openapi(self) -> dict[str, Any]:
        """The API's OpenAPI 3.1 document."""
        return self._request("GET", "/v1/openapi.json")

    # -- transport -------------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        body: Optional[dict[str, Any]] = None,
        query: Optional[dict[str, str]] = None,
        headers: Optional[dict[str, str]] = None,
        extra_timeout_s: float = 0.0,
        retry: bool = True,
    ) -> dict[str, Any]:
        url = self.base_url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = json.dumps(body).encode("utf-8") if body is not None else None
        sent = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            sent["Content-Type"] = "application/json"
        sent["Compactor-Tenant"] = self.tenant
        sent.update(headers or {})
        attempts = 1 + (self.retries if retry else 0)
        for attempt in range(attempts):
            request = urllib.request.Request(url, data=data, headers=sent, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s + extra_timeout_s) as response:
                    text = response.read().decode("utf-8")
                    return json.loads(text) if text else {}
            except urllib.error.HTTPError as error:
                failure = _error_of(error)
                if error.code not in (502, 503, 504) or attempt == attempts - 1:
                    raise failure from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
                if attempt == attempts - 1:
                    reason = getattr(error, "reason", error)
                    raise CompactorError(0, "connection_error", f"{method} {url}: {reason}") from None
            time.sleep(0.2 * 2**attempt)
        raise AssertionError("unreachable")


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


def _error_of(error: urllib.error.HTTPError) -> CompactorError:
    """The API's error body ``{"error": {"type", "message", "field"?}}`` as a CompactorError."""
    try:
        detail = json.loads(error.read().decode("utf-8")).get("error", {})
    except (ValueError, AttributeError):
        detail = {}
    return CompactorError(
        error.code,
        detail.get("type", "http_error"),
        detail.get("message", error.reason),
        detail.get("field"),
    )
