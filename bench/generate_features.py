#!/usr/bin/env python3
"""Writes a client-API features document of N flags for the load tests (deterministic).

Usage: bench/generate_features.py N > features-N.json

A realistic mix: a third gradual rollouts on userId (half of them with variants), a sixth constrained on a
property (`plan`), a sixth on userId lists, a sixth plain on, and the rest switched off.
"""
import json
import sys

n = int(sys.argv[1])
features = []
for i in range(n):
    name = f"flag-{i:05d}"
    kind = i % 6
    strategies = []
    variants = []
    enabled = kind != 5
    if kind in (0, 1):
        strategies.append({"name": "flexibleRollout", "parameters": {"rollout": str(10 + i % 80), "stickiness": "userId", "groupId": name}, "constraints": []})
        if kind == 1:
            variants = [{"name": "red", "weight": 500, "stickiness": "userId", "payload": {"type": "string", "value": "r"}},
                        {"name": "blue", "weight": 500, "stickiness": "userId"}]
    elif kind == 2:
        strategies.append({"name": "default", "parameters": {}, "constraints": [
            {"contextName": "plan", "operator": "IN", "values": ["pro", "enterprise"], "inverted": False, "caseInsensitive": False}]})
    elif kind == 3:
        strategies.append({"name": "userWithId", "parameters": {"userIds": ",".join(f"user-{j}" for j in range(i % 50, i % 50 + 20))}, "constraints": []})
    elif kind == 4:
        strategies.append({"name": "default", "parameters": {}, "constraints": []})
    features.append({"name": name, "type": "release", "enabled": enabled, "project": "default", "stale": False,
                     "impressionData": False, "strategies": strategies, "variants": variants})
json.dump({"version": 2, "features": features}, sys.stdout)
