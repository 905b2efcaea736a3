#!/usr/bin/python3
"""Draws the pictures of a fieldbrain-sim run and prints its summary table.

Usage: /usr/bin/python3 scripts/plot_run.py OUT_DIR
Reads OUT_DIR/summary.json and OUT_DIR/run_data.json (written by fieldbrain-sim) and writes
  OUT_DIR/trajectories.png  the arena in metres (walls, obstacles, floor line) and each robot's
                            path coloured by cycle, with start, end and collision marks;
  OUT_DIR/field_slices.png  the field slices fetched at the end, x to the right and y upwards
                            (as the web monitor's heat map), each on a symmetric colour scale
                            of its max |value| rounded up to 1, 2, 2.5 or 5 x 10^k (stated in
                            its title and colour bar; the web monitor uses the same rule);
  OUT_DIR/timeseries.png    "is the brain doing anything?": robot 0's motors (the drive
                            first: thrust, turn, steering; pan and audio faded) and path beside
                            those of a random controller run in the same arena with the same
                            seed (run_data.json's "baseline", brain runs only), the area each
                            explored and the collisions each made per cycle, the server's reply
                            latency (with the --hz deadline and any reconnection gaps), the
                            brain's prediction confidence and the reward sent.
Every picture states what ran: the server's field resolution R, its brain profile and config
(fieldbrain-sim --server-config), the controller, framing, seed and pacing.
Then prints one table row per robot (cycles, cycles/s, path length, net displacement,
collisions, area explored) and the pictures' paths. Needs matplotlib (Debian
python3-matplotlib): run it with /usr/bin/python3 (its shebang), not another python3.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.patches import Circle, Rectangle  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
import numpy as np  # noqa: E402

SLICE_NAMES = {0: "content channel 0", 62: "motor echo (direction)", 63: "motor echo (|motor| level)"}
# What the blobs of each slice are (docs/cycle.md): where the brain's activity sits in its
# field, and where its motor output is written back into it.
SLICE_MEANING = {
    0: "blobs: imprints, each cycle's sensor pattern stamped (±2 voxels)\n"
       "where a matching one sits, else at a resonant or empty spot",
    62: "motor echo of turning: a gradient along y\n"
        "(x0.95 a cycle, + 0.3 turn * y ramp); blobs: imprints",
    63: "motor echo of effort: an even level\n"
        "(x0.95 a cycle, + 0.2 mean |motor|); blobs: imprints",
}
BASELINE_COLOUR = "0.35"
ROBOT_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
# The PiCar-X client's six motor values (app/sim/picarx_motors.h): the three that move the car
# are drawn first and strong, the camera pan and the two audio values faded.
MOTOR_NAMES = ["thrust", "turn", "steering", "camera pan", "audio frequency", "audio volume"]
DRIVE_MOTORS = 3
NOTE_COLOUR = "0.4"


def slice_scale(values):
    """Symmetric colour limit: max |value| rounded up to 1, 2, 2.5 or 5 x 10^k (1 when all are
    0). monitor.js's niceScale() is the same rule, so both pictures of a slice agree."""
    m = float(np.max(np.abs(values))) if np.size(values) else 0.0
    if not m > 0:
        return 1.0
    e = 10.0 ** np.floor(np.log10(m))
    for f in (1, 2, 2.5, 5, 10):
        if f * e >= m * (1 - 1e-9):
            return f * e
    return 10 * e


def note(ax, text):
    """A note about a panel, above its plotting area (never over a data line)."""
    ax.set_title(text, loc="right", fontsize=8, color=NOTE_COLOUR)


def run_label(summary, data):
    """One line saying what ran: R, profile and config of the server, then the run's settings."""
    run = data.get("run") or summary.get("run") or {}
    parts = []
    if summary.get("controller", run.get("controller")) == "brain":
        brain = run.get("server_brain") or {}
        r = brain.get("resolution")
        parts.append(f"R = {r}" if r else "R unknown (no --monitor)")
        parts.append(f"profile {brain.get('profile', 'unknown')}")
        if brain.get("device"):
            parts.append(f"device {brain['device']}")
        parts.append(f"config {run.get('server_config') or 'not stated (--server-config)'}")
        parts.append(f"framing {summary.get('framing', '?')}")
    else:
        parts.append(f"{summary.get('controller', '?')} controller, no server (no R, profile or config)")
    hz = summary.get("hz")
    parts.append(f"paced at {hz:g} Hz" if hz else "unpaced")
    parts.append(f"seed {summary.get('seed', '?')}")
    if summary.get("reward"):
        parts.append("reward on")
    return ", ".join(parts)


def save_figure(fig, path, dpi, label=None):
    if label:
        fig.text(0.01, 0.995, label, ha="left", va="top", fontsize=9, color="0.15")
        fig.tight_layout(rect=(0, 0, 1, 0.96))
    else:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def draw_arena(ax, arena):
    W, H = arena["size"]
    ax.add_patch(Rectangle((0, 0), W, H, facecolor="0.96", edgecolor="none", zorder=0))
    line = arena.get("line")
    if line and line["points"]:
        pts = np.array(line["points"] + ([line["points"][0]] if line["closed"] else []))
        ax.plot(pts[:, 0], pts[:, 1], color="0.55", lw=2, ls="--", zorder=1, label="floor line")
    for x0, y0, x1, y1 in arena["boxes"]:
        ax.add_patch(Rectangle((min(x0, x1), min(y0, y1)), abs(x1 - x0), abs(y1 - y0),
                               facecolor="0.35", edgecolor="black", zorder=2))
    for x, y, r in arena["circles"]:
        ax.add_patch(Circle((x, y), r, facecolor="0.35", edgecolor="black", zorder=2))
    for x0, y0, x1, y1 in arena["walls"]:
        ax.plot([x0, x1], [y0, y1], color="black", lw=2.5, zorder=3)
    ax.set_xlim(-0.05 * W, 1.05 * W)
    ax.set_ylim(-0.05 * H, 1.05 * H)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")


def draw_paths(ax, robots, norm, label=True):
    """Each path coloured by cycle; start, end and collision marks. Returns a LineCollection."""
    lc = None
    for r in robots:
        x, y = np.asarray(r["x"]), np.asarray(r["y"])
        if len(x) == 0:
            continue
        pts = np.stack([x, y], 1)
        segs = np.stack([pts[:-1], pts[1:]], 1) if len(pts) > 1 else np.zeros((0, 2, 2))
        lc = LineCollection(segs, cmap="viridis", norm=norm, linewidths=2.2, zorder=4)
        lc.set_array(np.arange(len(segs)))
        ax.add_collection(lc)
        ax.plot(x[0], y[0], "o", ms=9, mfc="white", mec="black", zorder=5)
        ax.plot(x[-1], y[-1], "s", ms=8, mfc="black", mec="white", zorder=5)
        if label:
            ax.annotate(f"robot {r['index']}", (x[0], y[0]), xytext=(6, 6),
                        textcoords="offset points", fontsize=9)
        hits = np.asarray(r["collided"], dtype=bool)
        if hits.any():
            ax.plot(x[hits], y[hits], "x", color="red", ms=7, mew=2, zorder=6)
    return lc


def plot_trajectories(data, summary, path):
    W, H = data["arena"]["size"]
    robots = [r for r in data["robots"] if r["x"]]
    xs = np.concatenate([r["x"] for r in robots]) if robots else np.zeros(1)
    ys = np.concatenate([r["y"] for r in robots]) if robots else np.zeros(1)
    # A close-up beside the arena when the paths cover little of it (a first run often does).
    extent = max(xs.max() - xs.min(), ys.max() - ys.min())
    closeup = extent < 0.25 * max(W, H)
    fig, axes = plt.subplots(1, 2 if closeup else 1, squeeze=False,
                             figsize=(15 if closeup else 9, 7 * H / W + 2),
                             gridspec_kw={"width_ratios": [W / H, 1]} if closeup else None)
    ax = axes[0][0]
    draw_arena(ax, data["arena"])
    n_max = max([len(r["x"]) for r in data["robots"]] + [1])
    norm = plt.Normalize(0, n_max - 1)
    lc = draw_paths(ax, data["robots"], norm)
    if closeup:
        zx = axes[0][1]
        draw_arena(zx, data["arena"])
        draw_paths(zx, data["robots"], norm, label=False)
        half = max(extent / 2 + 0.05, 0.1)
        cx, cy = (xs.max() + xs.min()) / 2, (ys.max() + ys.min()) / 2
        zx.set_xlim(cx - half, cx + half)
        zx.set_ylim(cy - half, cy + half)
        zx.set_title(f"close-up ({2 * half:.2f} m wide)")
        ax.add_patch(Rectangle((cx - half, cy - half), 2 * half, 2 * half, fill=False,
                               edgecolor="tab:red", lw=1, zorder=7))
    if lc is not None:
        fig.colorbar(lc, ax=axes[0][-1], fraction=0.046, pad=0.03, label="cycle")
    ax.plot([], [], "o", mfc="white", mec="black", label="start")
    ax.plot([], [], "s", mfc="black", mec="white", label="end")
    ax.plot([], [], "x", color="red", mew=2, label="collision")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    ax.set_title(f"{data['arena'].get('name', 'arena')}: {summary.get('controller', '')} "
                 f"controller, {summary['totals']['cycles']} robot-cycles")
    save_figure(fig, path, dpi=110, label=run_label(summary, data))


def plot_slices(data, summary, path):
    slices = data["slices"]
    robots = sorted({s["robot"] for s in slices})
    channels = sorted({s["channel"] for s in slices})
    fig, axes = plt.subplots(len(robots), len(channels), squeeze=False,
                             figsize=(5.0 * len(channels), 5.0 * len(robots) + 1.0))
    for s in slices:
        ax = axes[robots.index(s["robot"])][channels.index(s["channel"])]
        v = np.asarray(s["values"], dtype=float)  # [x][y]
        R = v.shape[0]
        limit = slice_scale(v)
        # x to the right, y upwards: the web monitor's heat map shows a slice the same way.
        im = ax.imshow(v.T, origin="lower", cmap="coolwarm", vmin=-limit, vmax=limit,
                       extent=(-0.5, R - 0.5, -0.5, R - 0.5), interpolation="nearest")
        name = SLICE_NAMES.get(s["channel"], f"channel {s['channel']}")
        ax.set_title(f"robot {s['robot']}: {name}, z = {s['z']} of R = {R}\n"
                     f"min {v.min():+.3g}, max {v.max():+.3g}; scale ±{limit:g}", fontsize=9)
        ax.set_xlabel("x (voxel)\n" + SLICE_MEANING.get(s["channel"], ""), fontsize=8)
        ax.set_ylabel("y (voxel)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.suptitle("field slices at the end of the run: one z-plane of the R x R x R field, x to "
                 "the right, y upwards;\nred positive, blue negative, each on a symmetric scale "
                 "of its max |value| rounded up (as in the web monitor); docs/cycle.md says more",
                 fontsize=9, y=0.955)
    save_figure(fig, path, dpi=100, label=run_label(summary, data))


def cumulative_area(r, cell):
    """Area explored after each cycle (m^2): cells of `cell` m visited, the path's points."""
    seen, out = set(), []
    for x, y in zip(r["x"], r["y"]):
        seen.add((int(np.floor(x / cell)), int(np.floor(y / cell))))
        out.append(len(seen) * cell * cell)
    return np.asarray(out)


def draw_motors(ax, r, title):
    motors = np.asarray(r["motors"], dtype=float).reshape(-1, 6)
    cycles = np.arange(len(motors))
    for k in reversed(range(6)):  # the drive motors drawn last, on top
        drive = k < DRIVE_MOTORS
        ax.plot(cycles, motors[:, k], lw=1.1 if drive else 0.8, alpha=1.0 if drive else 0.3,
                color=None if drive else "0.45", ls="-" if drive else (0, (2, 2 + k)),
                label=f"[{k}] {MOTOR_NAMES[k]}", zorder=3 if drive else 2)
    ax.set_ylim(-1.05, 1.05)
    ax.set_ylabel("motor value")
    ax.set_xlabel("cycle")
    ax.set_title(title, loc="left", fontsize=9)


def draw_one_path(ax, arena, r, title):
    draw_arena(ax, arena)
    if r["x"]:
        draw_paths(ax, [r], plt.Normalize(0, max(len(r["x"]) - 1, 1)), label=False)
    ax.set_title(title, fontsize=9)


def draw_latency(ax, robots, summary):
    hz = summary.get("hz")
    any_latency = False
    for r in robots:
        lat = np.asarray(r.get("latency_ms", []), dtype=float)
        if lat.size and np.any(lat > 0):
            any_latency = True
            ax.plot(np.arange(lat.size), lat, lw=0.8,
                    color=ROBOT_COLOURS[r["index"] % len(ROBOT_COLOURS)], label=f"robot {r['index']}")
        for g in r.get("gaps", []):
            ax.axvline(g["cycle"], color="tab:red", lw=1.5, alpha=0.6)
            ax.annotate(f"{'reconnected' if g['resumed'] else 'lost'} after {g['seconds']:.1f} s",
                        (g["cycle"], 1), xycoords=("data", "axes fraction"), xytext=(3, -12),
                        textcoords="offset points", fontsize=7, color="tab:red")
    if hz:
        ax.axhline(1000.0 / hz, color="black", ls="--", lw=1, label=f"deadline ({hz:g} Hz)")
    ax.set_ylabel("reply latency (ms)")
    if any_latency:
        ax.set_yscale("log")
        plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        missed = summary["totals"].get("missed_deadlines")
        p = [x["reply_latency_ms"] for x in summary["robots"] if x.get("reply_latency_ms")]
        text = (f"median {np.median([x['p50'] for x in p]):.2f} ms, p95 "
                f"{max(x['p95'] for x in p):.2f} ms" if p else "")
        if missed is not None:
            text += f"; {missed} missed deadlines"
        note(ax, text)
    else:
        note(ax, "no replies (not a brain run)")


def plot_timeseries(data, summary, path):
    robots = data["robots"]
    r0 = robots[0]
    base = (data.get("baseline") or {}).get("robots") or []
    b0 = base[0] if base else None
    fig = plt.figure(figsize=(12, 21))
    grid = fig.add_gridspec(7, 2, height_ratios=[1.1, 1.6, 1, 1, 1, 1, 0.8])
    m_brain = fig.add_subplot(grid[0, 0])
    cname = summary.get("controller", "?")
    draw_motors(m_brain, r0, f"robot {r0['index']}: {cname} motors as applied")
    handles, labels = m_brain.get_legend_handles_labels()
    if b0 is not None:
        m_base = fig.add_subplot(grid[0, 1], sharey=m_brain)
        draw_motors(m_base, b0, "random controller, same arena and seed")
        p_brain = fig.add_subplot(grid[1, 0])
        p_base = fig.add_subplot(grid[1, 1])
        draw_one_path(p_brain, data["arena"], r0, f"robot {r0['index']}: {cname} path")
        draw_one_path(p_base, data["arena"], b0, "random controller path")
        m_base.legend(handles[::-1], labels[::-1], fontsize=7, loc="upper left",
                      bbox_to_anchor=(1.01, 1.0), borderaxespad=0, title="motor", title_fontsize=7)
    else:
        m_brain.legend(handles[::-1], labels[::-1], fontsize=7, loc="upper left",
                       bbox_to_anchor=(1.01, 1.0), borderaxespad=0, title="motor", title_fontsize=7)
        p_brain = fig.add_subplot(grid[1, :])
        draw_one_path(p_brain, data["arena"], r0, f"robot {r0['index']}: {cname} path "
                      "(no random baseline: not a brain run, or --no-baseline)")
    area_ax, coll_ax, lat_ax, conf_ax, rew_ax = (fig.add_subplot(grid[i, :]) for i in range(2, 7))
    cell = summary.get("cell_size_m", 0.1)
    for r in robots:
        colour = ROBOT_COLOURS[r["index"] % len(ROBOT_COLOURS)]
        n = np.arange(len(r["x"]))
        area_ax.plot(n, cumulative_area(r, cell), color=colour, label=f"robot {r['index']} ({cname})")
        coll_ax.step(n, np.cumsum(r["collided"]), where="post", color=colour,
                     label=f"robot {r['index']} ({cname})")
        conf = r["confidence"]
        if conf["cycle"]:
            conf_ax.plot(conf["cycle"], conf["value"], ".-", lw=1, color=colour, label=f"robot {r['index']}")
        rew_ax.plot(np.arange(len(r["reward"])), r["reward"], lw=1, color=colour, label=f"robot {r['index']}")
    for b in base:
        colour = ROBOT_COLOURS[b["index"] % len(ROBOT_COLOURS)]
        n = np.arange(len(b["x"]))
        area_ax.plot(n, cumulative_area(b, cell), color=colour, ls=":", lw=1.5,
                     label=f"robot {b['index']} (random)")
        coll_ax.step(n, np.cumsum(b["collided"]), where="post", color=colour, ls=":", lw=1.5,
                     label=f"robot {b['index']} (random)")
    area_ax.set_ylabel("area explored (m²)")
    t, bt = summary["totals"], (summary.get("baseline") or {}).get("totals")
    area = sum(r["area_m2"] for r in summary["robots"])
    if bt:
        area_ax.set_title(f"is the brain doing anything? {cname}: {area:.2f} m² explored, "
                          f"{t['collisions']} collisions; random controller: {bt['area_m2']:.2f} m², "
                          f"{bt['collisions']} collisions", loc="left", fontsize=10)
    if not bt:
        note(area_ax, f"{cell:g} m cells visited")
    area_ax.set_xlabel(f"cycle; area = {cell:g} m cells visited" + ("; dotted: the random controller" if base else ""),
                       fontsize=8)
    coll_ax.set_ylabel("collisions (cumulative)")
    coll_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    most = max([int(np.sum(r["collided"])) for r in robots + base] + [1])
    coll_ax.set_ylim(0, most * 1.05)  # at least 0..1: whole collisions, even with none
    draw_latency(lat_ax, robots, summary)
    conf_ax.set_ylabel("prediction confidence")
    conf_ax.set_ylim(-0.02, 1.02)
    if not any(r["confidence"]["cycle"] for r in robots):
        note(conf_ax, "no confidence samples (not a brain run, or no monitor)")
    else:
        note(conf_ax, "sampled through the monitor every 0.25 s of wall time")
    rew_ax.set_ylabel("reward sent")
    rew_ax.set_xlabel("cycle")
    if not any(np.any(np.asarray(r["reward"]) != 0) for r in robots):
        note(rew_ax, "no reward sent (fieldbrain-sim --reward sends one)")
    n_max = max([len(r["x"]) for r in robots + base] + [2])
    for ax in (area_ax, coll_ax, lat_ax, conf_ax, rew_ax):
        ax.set_xlim(0, n_max - 1)
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)
    save_figure(fig, path, dpi=90, label=run_label(summary, data))


def print_table(summary, pictures):
    seconds = summary.get("seconds", 0.0) or 0.0
    rows = [("robot", "cycles", "cycles/s", "path m", "net m", "collisions", "area m^2")]
    for r in summary["robots"]:
        rate = r["cycles"] / seconds if seconds > 0 else 0.0
        rows.append((str(r["index"]), str(r["cycles"]), f"{rate:.1f}", f"{r['distance_m']:.2f}",
                     f"{r.get('displacement_m', 0.0):.2f}", str(r["collisions"]),
                     f"{r['area_m2']:.2f}"))
    t = summary["totals"]
    area = sum(r["area_m2"] for r in summary["robots"])
    net = sum(r.get("displacement_m", 0.0) for r in summary["robots"])
    rows.append(("all", str(t["cycles"]), f"{summary.get('cycles_per_second', 0.0):.1f}",
                 f"{t['distance_m']:.2f}", f"{net:.2f}", str(t["collisions"]), f"{area:.2f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for i, row in enumerate(rows):
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths)))
        if i == 0 or i == len(rows) - 2:
            print("  ".join("-" * w for w in widths))
    cell = summary.get("cell_size_m", 0.1)
    print(f"run time {seconds:.1f} s; path = distance driven, net = start to end in a straight "
          f"line; area explored = {cell:g} m x {cell:g} m cells visited")
    base = summary.get("baseline")
    if base:
        bt = base["totals"]
        print(f"random controller, same arena and seed and cycles: collisions {bt['collisions']}, "
              f"path {bt['distance_m']:.2f} m, area explored {bt['area_m2']:.2f} m^2 "
              f"(this run: {t['collisions']}, {t['distance_m']:.2f} m, {area:.2f} m^2)")
    lat = [r["reply_latency_ms"] for r in summary["robots"] if r.get("reply_latency_ms")]
    if lat:
        line = (f"reply latency: median {np.median([x['p50'] for x in lat]):.2f} ms, "
                f"p95 {max(x['p95'] for x in lat):.2f} ms, max {max(x['max'] for x in lat):.2f} ms")
        if summary.get("hz"):
            line += (f"; paced at {summary['hz']:g} Hz, "
                     f"{t.get('missed_deadlines', 0)} missed deadlines")
        print(line)
    if t.get("reconnects"):
        gaps = [g for r in summary["robots"] for g in r.get("gaps", [])]
        print(f"reconnects: {t['reconnects']}, gaps "
              + ", ".join(f"{g['seconds']:.1f} s at cycle {g['cycle']}" for g in gaps))
    if summary.get("interrupted_by"):
        print(f"interrupted by {summary['interrupted_by']}: the numbers are for the cycles done "
              f"({t['cycles']} of {summary.get('cycles_requested', 0) * len(summary['robots'])})")
    for p in pictures:
        print(f"picture: {p}")


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    out = argv[0]
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, summary.get("run_data", "run_data.json"))) as f:
        data = json.load(f)
    pictures = [os.path.join(out, "trajectories.png"), os.path.join(out, "timeseries.png")]
    plot_trajectories(data, summary, pictures[0])
    plot_timeseries(data, summary, pictures[1])
    if data["slices"]:
        pictures.append(os.path.join(out, "field_slices.png"))
        plot_slices(data, summary, pictures[2])
    print_table(summary, pictures)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
