#!/usr/bin/env python3
"""From a run's final STATUS (status-final.json), what run.sh keeps of
it as NAME.status: the server's guard_* counts, pushes and fetches,
KEY=VALUE a line; and as NAME.clients: each client's name, its pushes
applied, its fetches and its pushes the guard's score left out
(guard_ignored), a line each by name.

Usage: keep_status.py STATUS_JSON NAME   (writes NAME.status, NAME.clients)"""
import json
import sys

status, name = sys.argv[1], sys.argv[2]
d = json.load(open(status))
with open(name + ".status", "w") as f:
    for k, v in d.items():
        if (k.startswith("guard_") or k in ("pushes", "fetches")) and isinstance(v, (int, float)):
            f.write("%s=%s\n" % (k, v))
clients = next((v for v in d.values() if isinstance(v, list)), [])
with open(name + ".clients", "w") as f:
    for c in sorted(clients, key=lambda c: c["name"]):
        f.write("%s pushes=%d fetches=%d guard_ignored=%d\n"
                % (c["name"], c["pushes"], c["fetches"], c.get("guard_ignored", 0)))
