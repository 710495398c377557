"""Verifying compactor's webhook deliveries in Python, on the standard library only (3.9+).

Deliveries are signed as Standard Webhooks (standardwebhooks.com): ``webhook-id``,
``webhook-timestamp`` (unix seconds) and ``webhook-signature: v1,<base64 HMAC-SHA256 of
"<id>.<timestamp>.<raw body>">``. The key is the bytes of the base64 after ``whsec_`` in the secret
(the standard alphabet or base64url); any other secret is its UTF-8 bytes. The ``standardwebhooks``
package on PyPI verifies the same headers; this module is the same check without a dependency.

Usage (in a request handler, on the raw body, before parsing it)::

    from webhook_verify import verify_webhook, WebhookVerificationError

    try:
        delivery_id = verify_webhook(raw_body, request.headers, secret)
    except WebhookVerificationError as error:
        return 400, error.reason          # "malformed", "mismatch" or "stale"
    if already_seen(delivery_id):         # deliveries may repeat: dedupe by the id
        return 204

Run as a script, it reads ``{"body", "headers", "secret"}`` as JSON on stdin and prints
``{"id": ...}`` or ``{"error": reason}``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import sys
import time
from typing import Mapping, Optional, Union

__all__ = ["verify_webhook", "WebhookVerificationError", "DEFAULT_TOLERANCE_S"]

#: Largest accepted distance between the signature's timestamp and the receiver's clock, seconds.
DEFAULT_TOLERANCE_S = 300


class WebhookVerificationError(Exception):
    """A delivery that does not verify; ``reason`` is ``malformed``, ``mismatch`` or ``stale``."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason = reason


def _key(secret: str) -> bytes:
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else None
    if encoded is not None and re.fullmatch(r"[A-Za-z0-9+/_-]+={0,2}", encoded):
        standard = encoded.replace("-", "+").replace("_", "/")
        try:
            return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
        except binascii.Error:
            pass
    return secret.encode("utf-8")


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def verify_webhook(
    body: Union[bytes, str],
    headers: Mapping[str, str],
    secret: str,
    tolerance_s: int = DEFAULT_TOLERANCE_S,
    now: Optional[float] = None,
) -> str:
    """Checks a delivery's signature and timestamp; returns its ``webhook-id`` (dedupe by it).

    Args:
        body: the raw body as received (bytes, or text that is its UTF-8 decoding).
        headers: the request's headers (names in any case).
        secret: the webhook's signing secret (``whsec_...``).
        tolerance_s: largest accepted distance between the timestamp and ``now``, seconds.
        now: the receiver's clock, unix seconds (default: ``time.time()``).

    Raises:
        WebhookVerificationError: ``malformed`` (a header missing, a timestamp that is not a
            number, no ``v1,`` signature), ``mismatch`` (another body, id, timestamp or secret),
            ``stale`` (a timestamp outside the tolerance: a replay, or a clock that is off).
    """
    raw = body.encode("utf-8") if isinstance(body, str) else body
    values = {name: _header(headers, name) for name in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    for name, value in values.items():
        if not value:
            raise WebhookVerificationError("malformed", f"no {name} header")
    message_id, timestamp_text, signature_text = values.values()
    if not re.fullmatch(r"\d{1,12}", timestamp_text.strip()):
        raise WebhookVerificationError("malformed", "webhook-timestamp is not unix seconds")
    timestamp = int(timestamp_text.strip())
    signatures = [s[3:] for s in signature_text.split(" ") if s.startswith("v1,")]
    if not signatures:
        raise WebhookVerificationError("malformed", "webhook-signature has no v1,<base64> signature")
    signed = f"{message_id}.{timestamp}.".encode("utf-8") + raw
    expected = base64.b64encode(hmac.new(_key(secret), signed, hashlib.sha256).digest()).decode("ascii")
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise WebhookVerificationError(
            "mismatch", "webhook-signature does not match: the body, id or timestamp was changed, or another secret"
        )
    skew = int(time.time() if now is None else now) - timestamp
    if abs(skew) > tolerance_s:
        raise WebhookVerificationError("stale", f"webhook-timestamp {timestamp} is {abs(skew)} s off")
    return message_id


if __name__ == "__main__":
    given = json.load(sys.stdin)
    try:
        print(json.dumps({"id": verify_webhook(given["body"], given["headers"], given["secret"])}))
    except WebhookVerificationError as error:
        print(json.dumps({"error": error.reason}))
