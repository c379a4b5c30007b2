"""bench/run.py's table: its rows and the verdicts of issue 9's targets, from a report.

Pure functions of the report dict run.py builds (and writes as JSON), so that what the
table says can be checked without timing anything (tests/bench). A target that could
not be measured (no peer measured: ``--no-peers``, the peers' venv failing to build, no
peer starting, every peer's rounds invalid) is reported ``NOT MEASURED (reason)``, with
a ``value`` of None, never left out.
"""

from __future__ import annotations

from typing import Any

FLOOR = "floor (plain asyncio)"
DSH_ROWS = {
    "dsh bare": "bare",
    "dsh + compaction + permissions": "two",
    "dsh + 3 plugins (in-memory log)": "memory",
    "dsh + 3 plugins (JSONL, flush/turn)": "jsonl",
    "dsh + 3 plugins (JSONL, flush/turn, fsync never)": "jsonl-nofsync",
}
LIMITS = {
    "dsh + 3 plugins (in-memory log)": 25.0,
    "dsh + 3 plugins (JSONL, flush/turn)": 40.0,
    "dsh + 3 plugins (JSONL, flush/turn, fsync never)": 40.0,
}
#: The issue's µs targets were set where the plain-asyncio floor costs 1-2 µs per step;
#: at the slow end of that (2 µs) a target of L µs is L/2 times the floor. The table
#: reports that ratio too, since this machine's floor may be slower.
REFERENCE_FLOOR_US = 2.0
PEER_FACTOR = 30.0
IMPORT_SHARE = 0.25
BYTES_LIMIT = 8192
DSH_IMPORT_ROW = "import dsh + 3 plugins"
HEAD = ["section", "case", "median", "unit", "IQR", "x floor", "x faster than peer", "target"]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def not_measured(report: dict[str, Any], *, loop: bool) -> str:
    """The verdict of a peer target no peer was measured for, with the reason."""
    peers = report.get("peers", {})
    venv = peers.get("venv") or {}
    if not venv.get("ok"):
        error = venv.get("error", "")
        reason = "--no-peers" if error == "--no-peers" else "the peers' venv failed to build"
    elif all("error" in info for name, info in peers.items() if name != "venv"):
        reason = "no peer started"
    else:
        reason = "every peer's rounds were invalid" if loop else "no peer's import was measured"
    return f"NOT MEASURED ({reason})"


def build_table(report: dict[str, Any]) -> tuple[list[list[str]], dict[str, Any]]:
    """Rows of the printed table, and the verdicts of the targets."""
    rows: list[list[str]] = []
    targets: dict[str, Any] = {}
    _loop(report, rows, targets)
    for name, row in report["memory"].items():
        target = ""
        if name.startswith("dsh"):
            ok = row["bytes_per_agent"] <= BYTES_LIMIT
            targets[f"memory: {name} ≤ 8 KB"] = {
                "value": row["bytes_per_agent"],
                "verdict": verdict(ok),
            }
            target = f"≤ 8 KB: {verdict(ok)}"
        rows.append(["memory", name, f"{row['bytes_per_agent']:,.0f}", "B/agent", "", "", ""])
        rows[-1].append(target)
    _startup(report, rows, targets)
    _persistence(report, rows, targets)
    _stream(report, rows, targets)
    return rows, targets


def _loop(report: dict[str, Any], rows: list[list[str]], targets: dict[str, Any]) -> None:
    loop = report["loop"]
    for name, row in loop["cases"].items():
        st, fl = row["us_per_step"], row["x_floor"]
        peer = row.get("x_faster_than_fastest_peer")
        shown_peer = f"{peer['median']:.1f}x" if peer and name.startswith("dsh") else ""
        target = ""
        if name in LIMITS:
            limit = LIMITS[name]
            ok = st["median"] <= limit and not row["invalid_rounds"]
            targets[f"loop: {name} ≤ {limit:g} µs/step"] = {
                "value": st["median"],
                "verdict": verdict(ok),
            }
            ratio = limit / REFERENCE_FLOOR_US
            ok_ratio = fl["median"] <= ratio and not row["invalid_rounds"]
            targets[f"loop: {name} ≤ {ratio:g}x floor (= {limit:g} µs at a 2 µs floor)"] = {
                "value": fl["median"],
                "verdict": verdict(ok_ratio),
            }
            target = f"≤ {limit:g} µs: {verdict(ok)}; ≤ {ratio:g}x floor: {verdict(ok_ratio)}"
        if row["invalid_rounds"]:
            target = f"INVALID ({row['invalid_rounds']} rounds without the tool call)"
        spread = f"{st['q1']:.1f}-{st['q3']:.1f}"
        figure = f"{st['median']:.2f}"
        rows.append(["loop", name, figure, "µs/step", spread, f"{fl['median']:.1f}x", shown_peer])
        rows[-1].append(target)
    memory_name = "dsh + 3 plugins (in-memory log)"
    fastest = loop["fastest_peer"]
    if fastest is None:
        missing = not_measured(report, loop=True)
        key = f"loop: {memory_name} ≥ {PEER_FACTOR:g}x faster than the fastest peer"
        targets[key] = {"value": None, "verdict": missing}
        rows.append(["loop", "  vs fastest peer", "", "x faster", "", "", ""])
        rows[-1].append(f"≥ {PEER_FACTOR:g}x: {missing}")
        return
    peer = loop["cases"][memory_name]["x_faster_than_fastest_peer"]
    ok = peer["median"] >= PEER_FACTOR
    key = f"loop: {memory_name} ≥ {PEER_FACTOR:g}x faster than {fastest}"
    targets[key] = {"value": peer["median"], "verdict": verdict(ok)}
    rows.append(["loop", f"  vs fastest peer ({fastest})", f"{peer['median']:.1f}"])
    rows[-1] += ["x faster", f"{peer['q1']:.1f}-{peer['q3']:.1f}", "", ""]
    rows[-1].append(f"≥ {PEER_FACTOR:g}x: {verdict(ok)}")


def _startup(report: dict[str, Any], rows: list[list[str]], targets: dict[str, Any]) -> None:
    startup = report["startup"]
    peers = [k for k in startup if k.startswith("import ") and k != DSH_IMPORT_ROW]
    fastest = min(peers, key=lambda k: startup[k]["net_ms"]["median"], default=None)
    for name, row in startup.items():
        net = row.get("net_ms")
        extra = f"net {net['median']:.1f} ms" if net else ""
        target = ""
        if name == DSH_IMPORT_ROW and fastest is None:
            missing = not_measured(report, loop=False)
            key = f"start-up: {DSH_IMPORT_ROW} ≤ 1/4 of the fastest peer's import"
            targets[key] = {"value": None, "verdict": missing}
            target = f"≤ 1/4 of the fastest peer: {missing}"
        elif name == DSH_IMPORT_ROW and net is not None:
            share = net["median"] / startup[fastest]["net_ms"]["median"]
            ok = share <= IMPORT_SHARE
            targets[f"start-up: {DSH_IMPORT_ROW} ≤ 1/4 of {fastest}"] = {
                "value": share,
                "verdict": verdict(ok),
            }
            target = f"{share:.2f} of {fastest} (net); ≤ 0.25: {verdict(ok)}"
        ms = row["ms"]
        rows.append(
            ["start-up", name, f"{ms['median']:.1f}", "ms", f"{ms['q1']:.1f}-{ms['q3']:.1f}"]
        )
        rows[-1] += [extra, "", target]


def _persistence(report: dict[str, Any], rows: list[list[str]], targets: dict[str, Any]) -> None:
    pers = report.get("persistence")
    if not pers:
        return
    write, load = pers["write"], pers["load"]
    marks = {
        "jsonl, flush per turn": f"≥ 0.8x: {write['target']}",
        "jsonl load + repair": f"≤ 1.5x: {load['target']}",
    }
    for name, row in write["cases"].items():
        x = row["x_floor"]["median"]
        rows.append(["persistence", f"write: {name}", f"{row['events_per_s']:,.0f}", "ev/s"])
        rows[-1] += ["", f"{x:.2f}x", "", marks.get(name, "")]
    for name, row in load["cases"].items():
        x = row["x_floor"]["median"]
        rows.append(["persistence", f"load {load['events']:,}: {name}"])
        rows[-1] += [f"{row['ms']:.1f}", "ms", "", f"{x:.2f}x", "", marks.get(name, "")]
    targets["persistence: jsonl events/s ≥ 0.8x floor"] = {
        "value": write["cases"]["jsonl, flush per turn"]["x_floor"]["median"],
        "verdict": write["target"],
    }
    targets["persistence: jsonl load ≤ 1.5x floor"] = {
        "value": load["cases"]["jsonl load + repair"]["x_floor"]["median"],
        "verdict": load["target"],
    }


def _stream(report: dict[str, Any], rows: list[list[str]], targets: dict[str, Any]) -> None:
    stream = report.get("stream")
    if not stream:
        return
    for name, st in stream["us_per_chunk"].items():
        rows.append(["streaming", name, f"{st['median']:.2f}", "µs/chunk"])
        rows[-1] += [f"{st['q1']:.2f}-{st['q3']:.2f}", "", "", ""]
        kind = name.split(":")[0]
        if name.endswith("dsh turn"):
            cost = stream["targets"][kind]["harness_us_per_chunk"]["median"]
            ok = stream["targets"][kind]["pass"]
            rows[-1][-1] = f"- floor {cost:.2f} µs; ≤ 10: {verdict(ok)}"
            targets[f"streaming ({kind}): dsh turn - floor ≤ 10 µs/chunk"] = {
                "value": cost,
                "verdict": verdict(ok),
            }


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [HEAD, *rows]) for i in range(len(HEAD) - 1)]
    for row in [HEAD, *rows]:
        cells = [
            row[i].ljust(w) if i < 2 or i == 3 else row[i].rjust(w) for i, w in enumerate(widths)
        ]
        print("  ".join(cells) + "  " + row[-1])


def peer_notes(report: dict[str, Any]) -> list[str]:
    """Lines printed under the table: why the peers were not measured (the venv's
    error), and each peer that did not start."""
    peers = report.get("peers", {})
    venv = peers.get("venv") or {}
    if not venv.get("ok"):
        error = str(venv.get("error", ""))
        if error == "--no-peers":
            return ["peers not measured: --no-peers"]
        lines = ["peers not measured: the peers' venv failed to build:"]
        return lines + [f"    {line}" for line in error.splitlines()]
    return [
        f"peer {name} did not start: {info['error']}"
        for name, info in peers.items()
        if name != "venv" and "error" in info
    ]


def section_profiles(report: dict[str, Any]) -> dict[str, str]:
    """The profiles the sections wrote where their target was missed (idle memory,
    persistence write and load, streaming), by what they profile."""
    found: dict[str, str] = {}
    for name, row in report.get("memory", {}).items():
        if "profile" in row:
            found[f"memory: {name}"] = row["profile"]
    for part in ("write", "load"):
        profile = (report.get("persistence") or {}).get(part, {}).get("profile")
        if profile:
            found[f"persistence: {part}"] = profile
    for kind, target in ((report.get("stream") or {}).get("targets") or {}).items():
        if "profile" in target:
            found[f"streaming ({kind})"] = target["profile"]
    return found
