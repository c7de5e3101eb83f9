#!/usr/bin/env python3
"""Checks that the test driver answers like the real CUDA driver.

Usage: compare_with_real.py path/to/libnbcuda_testdriver.so [h200_probe.json]

Runs probe_real_driver.py against the fixture (PROBE_LIBCUDA=the .so) and compares its
answers with those recorded from a real driver 13000 on an H200 (h200_probe.json): return
codes of every probed corner case (contexts, memory, events, streams, modules, launches,
fork), cuGetProcAddress resolution at cudaVersion 12000/13000 with both stream flags,
function attributes and the error names/strings. Values that describe the machine rather
than the driver's behaviour (device name, memory size, addresses, timings) are skipped, and
the few known, deliberate differences are listed in KNOWN with the reason. Exit status 1
and one line per difference when they disagree.
"""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
fixture = sys.argv[1]
real = json.load(open(sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "h200_probe.json")))

# Machine-specific values, not behaviour.
SKIP = {"_about", "attrs", "name", "name_len5", "pcibusid", "uuid", "totalmem", "meminfo",
        "dptr", "dptr2", "device_count", "elapsed_ok", "elapsed_v1_ok", "elapsed_reverse",
        "getproc_sample", "errors", "funcattrs"}
# Deliberate differences: key -> why.
KNOWN = {
    "modload_syntax": "the fixture does not compile PTX, so a bad instruction loads fine",
    "funcattrs/4": "register count: the fixture reports a fixed 32",
}

with tempfile.TemporaryDirectory() as out:
    env = dict(os.environ, PROBE_LIBCUDA=fixture, OUT=out)
    env.pop("NBCUDA_TESTDRIVER_FAIL", None)
    env.pop("NBCUDA_TESTDRIVER_MODE", None)
    env["NBCUDA_TESTDRIVER_DEVICES"] = "1"
    run = subprocess.run([sys.executable, "-W", "ignore", os.path.join(here, "probe_real_driver.py")],
                         env=env, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        sys.exit("probe failed:\n" + run.stdout + run.stderr)
    mine = json.load(open(os.path.join(out, "probe.json")))

diffs = []
for key, value in real.items():
    if key in SKIP or key in KNOWN:
        continue
    if mine.get(key) != value:
        diffs.append("%s: real %r, fixture %r" % (key, value, mine.get(key)))
for key, value in real["getproc_sample"].items():
    if mine["getproc"].get(key) != value:
        diffs.append("cuGetProcAddress %s: real %r, fixture %r" % (key, value, mine["getproc"].get(key)))
for key, value in real["funcattrs"].items():
    if "funcattrs/" + key not in KNOWN and mine["funcattrs"].get(key) != value:
        diffs.append("cuFuncGetAttribute %s: real %r, fixture %r" % (key, value, mine["funcattrs"].get(key)))
for key, value in real["errors"].items():
    if mine["errors"].get(key) != value:
        diffs.append("error %s: real %r, fixture %r" % (key, value, mine["errors"].get(key)))
for key, (rc, value) in real["attrs"].items():
    if mine["attrs"][key][0] != rc:
        diffs.append("attribute %s: real code %d, fixture %d" % (key, rc, mine["attrs"][key][0]))

for d in diffs:
    print(d)
print("%d differences from the real driver (%d known and allowed)" % (len(diffs), len(KNOWN)))
sys.exit(1 if diffs else 0)
