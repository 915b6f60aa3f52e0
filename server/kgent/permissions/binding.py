# Approval binding: a host's answer holds for one exact call (id, tool, final arguments) and nothing else.
# Canonical JSON → sha256; any changed argument gives a new hash, key order does not.

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, UTF-8 kept as is: one text per value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def binding_hash(call_id: str, tool_name: str, args: Mapping[str, Any]) -> str:
    """The sha256 (hex) that binds an approval to this call id, tool and exact arguments."""
    text = canonical_json({"call_id": call_id, "tool_name": tool_name, "args": dict(args)})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def request_id(run_id: str, n: int, binding: str) -> str:
    """The permission request id: `{run_id}:perm:{n}:{binding[:12]}`."""
    return f"{run_id}:perm:{n}:{binding[:12]}"
