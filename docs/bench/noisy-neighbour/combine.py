#!/usr/bin/env python3
"""Combines raw/<label>-<case>.json (written by the isolation suite's share-* subtests when
VCSYNCER_NEIGHBOURS_OUT names a directory) into result.json."""
import glob, json, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
res = {"command": "docs/bench/noisy-neighbour/run.sh (OUT=docs/bench/noisy-neighbour/raw LABEL=before|after), then combine.py",
       "thresholds": {"ratio": 1.5, "floorSeconds": 0.1}, "cases": {}}
for f in sorted(glob.glob("raw/*.json")):
    d = json.load(open(f))
    res["cases"].setdefault(d["case"], {})[d["label"]] = d
json.dump(res, open("result.json", "w"), indent=2)
for c, v in res["cases"].items():
    for l, d in v.items():
        print(f'{c:45} {l:15} alone {d["aloneMedianSeconds"]:.3f}s beside {d["besideMedianSeconds"]:.3f}s ×{d["ratio"]:.2f} pass={d["pass"]}')
