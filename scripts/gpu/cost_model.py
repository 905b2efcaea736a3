#!/usr/bin/env python3
"""The cost model of one fast brain cycle on a GPU (issue 37, item 1).

For every kernel that one fast cycle launches on CUDA (brain/cycle_fused.cpp, in launch order),
the bytes it must move between the GPU's memory and its SMs (its compulsory traffic: every
array it reads or writes, once; stencil and block re-reads are counted as absorbed by the
caches), a rough count of the instructions it executes, and the times those imply on an H100 SXM
and an H200. The sum is the cycle's floor. Beside it: the times measured on an H200 (docs/gpu.md
"Measured"), so that the ratio says how far each kernel and the cycle are from their floor.

Usage:
  python3 scripts/gpu/cost_model.py                       # R = 32, B = 1, 16, 256
  python3 scripts/gpu/cost_model.py --R 64 --B 1 4 16 --json cost.json
  python3 scripts/gpu/cost_model.py --stores 0.86 --pull-slots 8   # the bench's rewarded rows
  python3 scripts/gpu/cost_model.py --check-sources       # the kernel list against the .cu files

Python 3 standard library only. Every figure below is derived by hand from the kernels' source
(brain/ops/cuda/*.cu) and their launchers; the assumptions are the constants below, printed with
the table. The model is a floor, not a prediction of the achieved time: it says what no
implementation of the same launches can beat, and how much is left.
"""
import argparse
import json
import os
import re
import sys

# ---- The machines -----------------------------------------------------------------------------
# Peak DRAM bandwidth (vendor figure); instruction issue = SMs x 128 FP32 lanes x boost clock
# (an FMA counts as one instruction); L2 size.
GPUS = {
    "H100": {"name": "H100 SXM (HBM3)", "bandwidth": 3.35e12, "issue": 132 * 128 * 1.98e9, "sms": 132,
             "l2_bytes": 50e6},
    "H200": {"name": "H200 (HBM3e)", "bandwidth": 4.8e12, "issue": 132 * 128 * 1.98e9, "sms": 132,
             "l2_bytes": 50e6},
}
# The time a launch costs when the GPU has nothing else to do: an eager launch is bounded by the
# host (cudaLaunchKernel plus LibTorch's dispatcher, ~2-3 us each, so a kernel shorter than that
# leaves the GPU waiting); a CUDA graph replays its nodes back to back (~1 us per kernel node on
# Hopper). The fast cycle runs as a graph (docs/gpu.md "One CUDA graph per tick").
LAUNCH_US = {"eager": 2.5, "graph": 1.0}
# One host round trip at the end of a cycle: the motors' device-to-host copy and its sync
# (outside the graph), an assumption, not a measurement.
HOST_SYNC_US = 8.0
# Rough instruction counts of the costly device functions (CUDA's accurate float versions;
# philox::normal runs a whole Philox4x32-10 block plus two Box-Muller pairs to return one
# value; an integer division or modulo by a run-time value).
OPS_TRANSCENDENTAL = 20
OPS_SIGMOID = 25
OPS_PHILOX_NORMAL = 220
OPS_INT_DIV = 20
OPS_INT64_DIV = 70

# ---- Measured (docs/gpu.md "Measured": H200, driver 580.159.04, LibTorch 2.11, R = 32) --------
# ncu gpu__time_duration per launch at B = 1, us: NVIDIA H200, driver 580.159.04, CUDA 13.0,
# LibTorch 2.11.0+cu130, sm_90, 2026-11-28; `ncu --metrics gpu__time_duration.sum --launch-skip
# 60 -c 30` over `fieldbrain-bench --impl cpp_fast --R 32 --B 1 --seconds 0.05` with
# FIELDBRAIN_CUDA_GRAPH=0 (eager, ncu's default base clocks; scripts/gpu-check.sh --parts ncu
# as it was then). The first whole cycle profiled, without reward (the attractor kernels pull
# nothing; pull_kernel is the copy F = next). The read-out runs twice a cycle: the mean of its
# two launches (53.50 and 54.11; 12.22 and 12.13). Caveat: the profile began exactly at a cycle's
# first kernel after skipping 60, and the brain's set-up launches fills (launches 61-90 of the
# B = 16 profile were all set-up fills), so this was most likely the brain's first cycle (n = 0,
# the bench's untimed warm-up; 60 set-up launches at B = 1): there the error field
# returns at once (it starts at n = 1; its 2.37 us is left out below) and the history and
# memories are empty; the next cycle's first kernels took longer (score_kernel 5.09,
# timescale_kernel 7.17). docs/gpu.md "The next lease" skips further.
NCU_H200_B1_US = {
    "score_kernel": 3.01, "channel_means_kernel": 18.14, "timescale_kernel": 4.03,
    "imprint_maps_kernel": 10.72, "imprint_plane_max_kernel": 6.50,
    "imprint_robot_kernel": 41.86, "readout_channel_kernel": 53.8, "readout_finish_kernel": 12.2,
    "novelty_modulation_kernel": 17.92, "spontaneous_wave_kernel": 4.22,
    "ef_stats_partial_kernel": 4.58, "ef_stats_finish_kernel": 5.50, "x2_kernel": 23.01,
    "x3_kernel": 28.80, "x4_coupling_kernel": 41.60, "x4_stats_kernel": 20.19,
    "diffuse_kernel": 36.67, "record_kernel": 3.55, "sums_kernel": 3.20, "pull_kernel": 9.47,
    "apply_kernel": 2.43, "act_kernel": 14.88, "echo_kernel": 3.62, "add_ (noise key)": 2.53,
}
# fieldbrain-bench rows on the same H200 the same day (CUDA events, ms): B = 1 and 16 from the
# run of `--B 1 16 --impl copy ... cpp_fast`, B = 4 and the read-out from the A/B run of the
# kernel sets (its v2 half), `group` a BrainGroup tick with the CUDA graph on. A model of
# rewarded cycles (--stores, --pull-slots) puts the rewarded row beside its cycle instead.
BENCH_H200_MS = {
    "copy": {1: 0.012, 16: 0.070},
    "field_step_seeded": {1: 0.127, 4: 0.402, 16: 1.463},
    "field_readout_op": {1: 0.050, 4: 0.065, 16: 0.194},
    "cpp_fast": {1: 0.401, 4: 0.766, 16: 2.257},
    "cpp_fast_reward": {1: 0.517, 16: 3.436},  # the bench's reward schedule, 8 slots pulling
    "group": {1: 0.425, 16: 2.309, 64: 8.320, 256: 31.974},
}
MEASURED_SOURCE = "docs/gpu.md \"Measured\" (H200, LibTorch 2.11, R = 32, 2026-11-28)"
# The ncu figures come from a cycle without reward: beside a model of rewarded cycles they would
# compare a copy with a pull, so these rows show no measurement there.
REWARD_KERNELS = ("record_kernel", "shadow_kernel", "sums_kernel", "pull_kernel")

# __global__ functions of brain/ops/cuda/*.cu that no fast cycle launches, and why.
NOT_IN_FAST_CYCLE = {
    "philox_normal_kernel": "the initial field, once, when a brain is made (brain/field_brain.cpp)",
}

# The brain's fixed sizes (brain/ops/*_math.h, cycle_layout.h, field_readout_layout.h).
FACT_COLUMNS, VALUE_COLUMNS = 16, 4
HIST_CAPACITY, HERR_CAPACITY, RECENT_CAPACITY = 1000, 50, 3
NOV_DIM, NOV_CAPACITY, MAP_CAPACITY, BLOB_VOXELS = 512, 200, 100, 125
READOUT_CELLS, READOUT_CHANNELS, READOUT_FACES = 64, 64, 6
READOUT_WIDTH = (2 * READOUT_CHANNELS * READOUT_CELLS + 4 * READOUT_CHANNELS +
                 READOUT_CHANNELS * READOUT_FACES + READOUT_CELLS + 8)
TIMESCALE_WINDOWS = (1, 10, 100, 1000)
F32, I64 = 4, 8


def pending_width(S):
    return 136 + 4 * S


def imprint_support(S, R):
    """Sizes of the imprint's projection tables (brain/ops/sensory_imprint.cpp make_imprint_tables):
    (support voxels, (voxel, sensor) entries, dilated voxels)."""
    g = 1
    while g * g < S:
        g += 1
    clamp = lambda v: min(R - 1, max(0, v))
    entries = set()
    for i in range(S):
        fx, fy, fz = (i % g) * R // g, (i // g) * R // g, i * R // S
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dz in (-1, 0, 1):
                    entries.add(((clamp(fx + dx) * R + clamp(fy + dy)) * R + clamp(fz + dz), i))
    support = sorted({v for v, _ in entries})
    dilated = set()
    for v in support:
        x, y, z = v // (R * R), (v // R) % R, v % R
        for i in range(max(0, x - 1), min(R - 1, x + 1) + 1):
            for j in range(max(0, y - 1), min(R - 1, y + 1) + 1):
                for k in range(max(0, z - 1), min(R - 1, z + 1) + 1):
                    dilated.add((i * R + j) * R + k)
    return len(support), len(entries), len(dilated)


def kernels(B, R, S=24, M=4, A=8, stores=0.0, pull_slots=0):
    """The launches of one fast cycle, in order. Each: name, op (the C++ entry that launches
    it), step (docs/cycle.md), launches, read and written bytes, instructions, threads of its
    grid, and how the figures were derived. `stores`: the fraction of robots whose attractor
    stores this cycle; `pull_slots`: attractor slots pulling per robot (the bench: 0 and 0, its
    rewards are zero)."""
    V = R ** 3
    blk = lambda n, per=256: (n + per - 1) // per  # blocks of `per` threads over n
    field = lambda channels: B * channels * V * F32  # bytes of `channels` full channels
    out = []

    def k(name, op, step, read, written, ops, blocks, note, launches=1):
        out.append({"kernel": name, "op": op, "step": step, "launches": launches,
                    "read_bytes": int(read), "written_bytes": int(written),
                    "bytes": int(read + written), "ops": int(ops), "blocks": int(blocks),
                    "note": note})

    facts_bytes = B * (FACT_COLUMNS * I64 + VALUE_COLUMNS * F32 + S * F32 + A * 2 * F32)
    k("memcpy H2D (fact tables)", "CycleFacts::upload", "inputs", facts_bytes, facts_bytes, 0, 0,
      "4 host-to-device copies of the cycle's tables (graph memcpy nodes)", launches=4)
    k("score_kernel", "prediction_score", "1", B * (3 * S * F32 + FACT_COLUMNS * I64),
      B * (S + 2) * F32, B * S * 6, blk(B, 128), "one thread per robot: e = s - pred, conf")
    k("channel_means_kernel", "hierarchy_observe_", "2", field(64), B * 64 * F32, B * 64 * V,
      B * 64, "block (channel, robot): reads the whole field once")
    window_items = sum(w - 1 for w in TIMESCALE_WINDOWS) + 4
    k("timescale_kernel", "hierarchy_observe_", "2",
      B * (window_items * S * F32 + 4 * 16 * S * F32 + 4 * HERR_CAPACITY * F32),
      B * (4 * 16 * S * F32 + pending_width(S) * F32 + S * F32),
      B * (window_items * S * 2 + 4 * 16 * S * 10), B * 4,
      "block (timescale, robot): the history window means (up to 1,000 x S) and W's update")
    k("error_field_kernel", "error_field_update_", "3", B * S * F32, B * V * F32,
      B * V * (3 * OPS_INT_DIV + 4 + (5.0 / R) * 16 * 12), B * blk(V),
      "one thread per voxel over all robots; site coordinates once per block; mean|Ef| from "
      "the R^2 (x, y) columns by the robot's first block")
    n_support, n_entries, n_dilated = imprint_support(S, R)
    k("imprint_maps_kernel", "sensory_imprint_", "4", field(64), B * 2 * V * F32,
      B * V * (64 * 2 + 8 + 2 * OPS_INT_DIV), B * blk(V),
      "one thread per voxel of every robot: act and fp")
    k("imprint_plane_max_kernel", "sensory_imprint_", "4", B * 2 * V * F32, B * R * 8,
      B * V * (OPS_PHILOX_NORMAL + 10), B * R,
      "block (x-plane, robot): empty score from act and occ, plane argmax")
    blob = 64 * BLOB_VOXELS * F32
    k("imprint_robot_kernel", "sensory_imprint_", "4",
      B * (MAP_CAPACITY * (S * F32 + 3 * I64 + 27 * F32) + n_support * 2 * F32 + n_entries * 8 +
           n_dilated * F32 + R * 8 + blob),
      B * (n_support * F32 + S * F32 + 3 * I64 + blob + 8),
      B * (MAP_CAPACITY * S * 3 + n_entries * 4 + n_dilated * 30 + 64 * BLOB_VOXELS * 6), B,
      f"one block per robot: pattern, map search, resonant map on {n_support} support voxels "
      f"smoothed on {n_dilated}, serial choice, blob; latency-bound (thread 0's loops); "
      f"1024 threads")

    def readout(pass_name):
        k("readout_channel_kernel", "field_readout_out", pass_name, field(64),
          B * (2 * 64 * READOUT_CELLS + 64 * (4 + READOUT_FACES)) * F32, B * 64 * V * 35,
          B * 64, "block (robot, channel): cell sums, then the channel's statistics "
          "(second pass over the channel from L2)")
        k("readout_finish_kernel", "field_readout_out", pass_name, B * READOUT_WIDTH * F32,
          B * (READOUT_CELLS + 8) * F32, B * 64 * 70, B, "block per robot: cell activity, summary")

    readout("5")
    k("novelty_modulation_kernel", "novelty_modulation_", "5-6",
      B * (NOV_DIM * 32 + NOV_CAPACITY * (NOV_DIM * F32 + I64)),
      B * (NOV_DIM * F32 + I64 + 16 * F32), B * NOV_CAPACITY * NOV_DIM * 2, B,
      "block per robot: 512 corner samples, cosine against 200 remembered samples (400 KB)")
    k("record_kernel", "attractor_pull_ (store)", "6", B * I64 + stores * field(64),
      stores * field(64), 0, B * 64 * blk(V, 1024),
      "a robot that stores copies its field into the bank (8.4 MB at R = 32); the bench's plain "
      "rows never store, its rewarded rows (cpp_fast_reward) 7 cycles in 8: --stores 0.86")
    k("shadow_kernel", "attractor_pull_ (store)", "6", B * I64 + 2 * stores * field(64),
      stores * (field(64) // 2 + 64 * F32), stores * 64 * V * 8, B * 64,
      "block per (robot x channel) of a storing robot: the channel's largest |value|, then its "
      "16-bit levels (4.2 MB at R = 32) and step: the channel read twice (the second time from L2)")
    k("spontaneous_wave_kernel", "spontaneous_wave_out", "7.3", B * 5 * 4 * F32, B * V * F32,
      B * V * (5 * (6 + OPS_TRANSCENDENTAL) + 3 * OPS_INT_DIV), B * blk(V), "one thread per voxel")
    # The field step (brain/ops/cuda/field_step_kernel.cu): seven launches over a workspace
    # of 160 channels per robot.
    k("ef_stats_partial_kernel", "field_step_seeded_out", "7", B * V * F32, B * 64 * 2 * F32,
      B * V * 3, B * 64, "64 blocks per robot (a slice of R^3 / 64 voxels each): partial max and sum")
    k("ef_stats_finish_kernel", "field_step_seeded_out", "7", B * 64 * 2 * F32, B * 4 * F32,
      B * 64 * 2, blk(B), "one thread per robot adds its 64 partials in slice order")
    x2_ops = (OPS_PHILOX_NORMAL + OPS_INT64_DIV) / 4.0 + 16
    k("x2_kernel", "field_step_seeded_out", "7.1-7.3", field(48) + field(4) + B * V * F32, field(48),
      B * 48 * V * (x2_ops + (32 * OPS_SIGMOID + 16 * 4 * OPS_SIGMOID) / 48.0), B * blk(12 * V),
      "decay, shift, noise: one thread per Philox block of 4 elements, all four used")
    k("x3_kernel", "field_step_seeded_out", "7.4", field(48) + field(4), field(96),
      B * 48 * V * (OPS_INT64_DIV + 4 * OPS_INT_DIV + 30 + 4 * OPS_TRANSCENDENTAL + OPS_SIGMOID), blk(B * 48 * V),
      "7-point zero-padded stencil (neighbours from cache); tanh of 4 dynamics channels per element")
    k("x4_coupling_kernel", "field_step_seeded_out", "7.5", field(96) + field(5), field(96),
      B * 48 * V * (OPS_INT64_DIV + 4 * OPS_INT_DIV + 27 * 6 + OPS_SIGMOID + 10), blk(B * 48 * V),
      "27-point box of Aq (from cache); X4 over X3 in place and Fn[0:48]")
    k("x4_stats_kernel", "field_step_seeded_out", "7.6-7.8", field(48) + field(16) + B * V * F32,
      field(16), B * V * (OPS_INT64_DIV + 48 * 8 + 16 * 15 + 30), blk(B * V),
      "per voxel: 48 channels' statistics, D1, clamp; one atomic max per warp")
    k("diffuse_kernel", "field_step_seeded_out", "7.8", field(64), field(64),
      B * 64 * V * (4 * OPS_INT_DIV + 9 * 2 + 30), B * 64 * blk(V),
      "grid (voxels, channel, robot): no 64-bit division; wrap by comparison")
    pull_bytes = pull_slots * field(64)
    k("sums_kernel", "attractor_pull_", "7.9",
      B * A * 2 * F32 + (field(64) + pull_bytes // 2 if pull_slots else 0),
      B * 64 * (1 + 2 * A) * 8 if pull_slots else 0,
      B * 64 * V * 3 * (1 + 2 * pull_slots) if pull_slots else 0, B * 64 * A,
      "block (slot, robot x channel): each pulling slot's 16-bit shadow read once (half the bank's "
      "bytes: pull_slots x 4.2 MB per robot at R = 32); zero-weight slots return at once, unread "
      "(the plain bench rows: all; the rewarded rows: --pull-slots 8)")
    k("pull_kernel", "attractor_pull_", "7.9-7.10",
      B * A * 2 * F32 + B * A * 64 * F32 + field(64) + pull_bytes // 2, field(64),
      B * 64 * V * 4 * pull_slots, B * 64 * blk(V, 1024),
      "grid over every voxel: writes F from next (the copy of step 7.10, a plain copy where no "
      "slot pulls), each pulling slot's 16-bit shadow read a second time (the coefficients need "
      "the whole field's sums first)")
    k("apply_kernel", "hierarchy_apply_", "7.10", B * 64 * 49 * 32, B * 64 * 49 * 32,
      B * 64 * 343 * 3, B * 64, "block (channel, robot): adds the pending value on a cube "
      "of at most 7^3 voxels (49 z-lines of one 32-byte sector)")
    readout("8-10")
    k("act_kernel", "prediction_act", "8-11",
      B * (READOUT_WIDTH + 4 * 16 * S + 4 * HERR_CAPACITY + RECENT_CAPACITY * S + S + 1) * F32 + B * FACT_COLUMNS * I64,
      B * (READOUT_CELLS + 16 * READOUT_CELLS + 1 + 4 * S + 3 * S + M) * F32,
      B * (16 * READOUT_CELLS * 10 + 4 * 16 * S * 2 + S * 40 + M * 300), B,
      "block per robot: pooling, temporal means, hierarchical and sensor predictions, motors")
    k("echo_kernel", "prediction_act", "11", B * 2 * V * F32 + B * M * F32, B * 2 * V * F32,
      B * 2 * V * (2 * OPS_INT_DIV + 10), B * 2 * blk(V), "channels 62 and 63: motor echo")
    k("add_ (noise key)", "Cycle::finish", "end", B * 2 * I64, B * 2 * I64, B * 2,
      1, "ATen: the next cycle's Philox key")
    k("copy_ (telemetry columns)", "Cycle::finish", "end", 11 * B * F32,
      11 * B * F32, 0, 1, "ATen: 11 columns copied in place", launches=11)
    k("memcpy D2H (motors) + sync", "FieldBrainImpl::step_into", "end", B * M * F32, B * M * F32, 0, 0,
      f"outside the graph: one copy and the host's wait (assumed {HOST_SYNC_US:g} us)")
    return out


def floors(entry, gpu, mode):
    """(memory us, compute us, launch us, floor us) of one kernel on one GPU."""
    memory = entry["bytes"] / gpu["bandwidth"] * 1e6
    compute = entry["ops"] / gpu["issue"] * 1e6
    launch = LAUNCH_US[mode] * entry["launches"]
    if entry["kernel"].startswith("memcpy D2H"):
        launch = HOST_SYNC_US
    return memory, compute, launch, max(memory, compute, launch)


def model(R, batches, stores, pull_slots, S, M, A):
    result = {"R": R, "S": S, "M": M, "A": A,
              "assumptions": {
                  "gpus": GPUS, "launch_us": LAUNCH_US, "host_sync_us": HOST_SYNC_US,
                  "ops": {"transcendental": OPS_TRANSCENDENTAL, "sigmoid": OPS_SIGMOID,
                          "philox_normal": OPS_PHILOX_NORMAL, "int_div": OPS_INT_DIV,
                          "int64_div": OPS_INT64_DIV},
                  "attractor_stores_fraction": stores, "attractor_pull_slots": pull_slots},
              "measured_source": MEASURED_SOURCE, "batches": []}
    for B in batches:
        rows = kernels(B, R, S, M, A, stores, pull_slots)
        for row in rows:
            row["floor_us"] = {}
            for key, gpu in GPUS.items():
                mem, comp, launch, floor = floors(row, gpu, "graph")
                row["floor_us"][key] = {"memory": mem, "compute": comp, "launch_graph": launch,
                                        "launch_eager": floors(row, gpu, "eager")[2], "floor": floor}
            rewarded = (stores > 0 or pull_slots > 0) and row["kernel"] in REWARD_KERNELS
            row["measured_ncu_h200_us"] = (NCU_H200_B1_US.get(row["kernel"])
                                           if B == 1 and R == 32 and not rewarded else None)
        cycle = {"B": B, "bytes": sum(r["bytes"] for r in rows), "ops": sum(r["ops"] for r in rows),
                 "launches": sum(r["launches"] for r in rows), "floor_ms": {}, "rows": {}}
        for key, gpu in GPUS.items():
            cycle["floor_ms"][key] = {
                "graph": sum(r["floor_us"][key]["floor"] for r in rows) / 1e3,
                "eager": sum(floors(r, gpu, "eager")[3] for r in rows) / 1e3,
                "memory_only": sum(r["floor_us"][key]["memory"] for r in rows) / 1e3}
        # The bench rows this model predicts: the same sums over the kernels each row times.
        field_step = [r for r in rows if r["op"] == "field_step_seeded_out"]
        readout = [r for r in rows if r["op"] == "field_readout_out"][:2]
        copy_bytes = 2 * B * 64 * R ** 3 * F32
        for name, part in (("field_step_seeded", field_step), ("field_readout_op", readout)):
            cycle["rows"][name] = {key: sum(r["floor_us"][key]["floor"] for r in part) / 1e3 for key in GPUS}
        cycle["rows"]["copy"] = {key: max(copy_bytes / gpu["bandwidth"] * 1e6, LAUNCH_US["graph"]) / 1e3
                                 for key, gpu in GPUS.items()}
        cycle["rows"]["cpp_fast"] = {key: cycle["floor_ms"][key]["graph"] for key in GPUS}
        cycle["copy_bytes"] = copy_bytes
        # A field step fused to the fewest passes its stencils allow: read F, Ef and the wave
        # once, write next once (the halos from cache).
        cycle["fused_field_step_bytes"] = B * (64 + 64 + 2) * R ** 3 * F32
        measured = {}
        if R == 32:
            rewarded = stores > 0 or pull_slots > 0
            for name in ("copy", "field_step_seeded", "field_readout_op"):
                if B in BENCH_H200_MS[name]:
                    measured[name] = BENCH_H200_MS[name][B]
            cycle_row = "cpp_fast_reward" if rewarded else "cpp_fast"
            if B in BENCH_H200_MS[cycle_row]:
                measured["cpp_fast"] = BENCH_H200_MS[cycle_row][B]
                measured["cpp_fast_from"] = cycle_row
            elif not rewarded and B in BENCH_H200_MS["group"]:
                measured["cpp_fast"] = BENCH_H200_MS["group"][B]
                measured["cpp_fast_from"] = "group"
        cycle["measured_h200_ms"] = measured
        result["batches"].append({"cycle": cycle, "kernels": rows})
    return result


def fmt_mb(n):
    return f"{n / 1e6:.3f}" if n < 1e8 else f"{n / 1e6:.0f}"


def fmt_us(x):
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 1000 else f"{x:.0f}"


def print_tables(result, out=sys.stdout):
    p = lambda s="": print(s, file=out)
    R = result["R"]
    h200 = GPUS["H200"]
    p(f"Cost model of one fast cycle: R = {R}, S = {result['S']}, M = {result['M']}, "
      f"A = {result['A']} "
      f"(attractor stores {result['assumptions']['attractor_stores_fraction']:g}, "
      f"pulling slots {result['assumptions']['attractor_pull_slots']})")
    p(f"floor = max(bytes / DRAM bandwidth, instructions / issue rate, launch); bandwidth "
      f"{GPUS['H100']['bandwidth'] / 1e12:g} TB/s (H100 SXM), {h200['bandwidth'] / 1e12:g} TB/s (H200); "
      f"issue {h200['issue'] / 1e12:.1f} T instr/s; launch {LAUNCH_US['graph']:g} us per kernel in a "
      f"CUDA graph ({LAUNCH_US['eager']:g} us eager); blocks < {h200['sms']} SMs = part of the GPU idle")
    p(f"measured: {MEASURED_SOURCE}; ncu per launch at B = 1, base clocks, eager, a cycle without reward")
    for entry in result["batches"]:
        cyc, rows = entry["cycle"], entry["kernels"]
        B = cyc["B"]
        p()
        p(f"B = {B}")
        p("| # | kernel | op | step | blocks | MB moved | Gop | H100 floor us | H200 floor us "
          "| bound | measured us | measured / floor |")
        p("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for i, r in enumerate(rows, 1):
            f100, f200 = r["floor_us"]["H100"], r["floor_us"]["H200"]
            bound = max((f200["memory"], "memory"), (f200["compute"], "compute"),
                        (f200["launch_graph"], "launch"))[1]
            m = r["measured_ncu_h200_us"]
            ratio = f"{m / f200['floor']:.0f}x" if m else ""
            blocks = f"{r['blocks']}" + (f" x{r['launches']}" if r["launches"] > 1 else "")
            p(f"| {i} | `{r['kernel']}` | {r['op']} | {r['step']} | {blocks if r['blocks'] else '-'} | "
              f"{fmt_mb(r['bytes'])} | {r['ops'] / 1e9:.3f} | {fmt_us(f100['floor'])} | "
              f"{fmt_us(f200['floor'])} | {bound} | {fmt_us(m) if m else ''} | {ratio} |")
        p(f"| | **cycle** ({cyc['launches']} launches) | | | | {fmt_mb(cyc['bytes'])} | "
          f"{cyc['ops'] / 1e9:.3f} | {fmt_us(cyc['floor_ms']['H100']['graph'] * 1e3)} | "
          f"{fmt_us(cyc['floor_ms']['H200']['graph'] * 1e3)} | | | |")
    p()
    rewarded = (result["assumptions"]["attractor_stores_fraction"] > 0 or
                result["assumptions"]["attractor_pull_slots"] > 0)
    p("Per cycle, ms: the floor in a CUDA graph / eager, and memory alone; each bench row's floor "
      "against its H200 measurement")
    p("| B | MB moved | H100 floor graph / eager | H200 floor graph / eager | H200 memory alone "
      "| bench row | H200 floor | H200 measured | measured / floor |")
    p("|---|---|---|---|---|---|---|---|---|")
    for entry in result["batches"]:
        cyc = entry["cycle"]
        f100, f200 = cyc["floor_ms"]["H100"], cyc["floor_ms"]["H200"]
        first = True
        for name in ("cpp_fast", "field_step_seeded", "field_readout_op", "copy"):
            floor = cyc["rows"][name]["H200"]
            measured = cyc["measured_h200_ms"].get(name)
            label = name
            if name == "cpp_fast" and rewarded:
                label = "cpp_fast_reward"
            elif name == "cpp_fast" and cyc["measured_h200_ms"].get("cpp_fast_from") == "group":
                label = "cpp_fast (group tick)"
            lead = (f"| {cyc['B']} | {fmt_mb(cyc['bytes'])} | {f100['graph']:.4f} / {f100['eager']:.4f} | "
                    f"{f200['graph']:.4f} / {f200['eager']:.4f} | {f200['memory_only']:.4f} |"
                    if first else "| | | | | |")
            p(f"{lead} {label} | {floor:.4f} | {measured if measured is not None else ''} | "
              f"{f'{measured / floor:.1f}x' if measured else ''} |")
            first = False
    p()
    for entry in result["batches"]:
        cyc = entry["cycle"]
        B = cyc["B"]
        fused = cyc["fused_field_step_bytes"]
        resident = B * (64 + 160) * R ** 3 * F32  # the field and the field step's workspace
        robots_per_s = B / cyc["floor_ms"]["H200"]["graph"] * 1e3
        memory_rps = B / cyc["floor_ms"]["H200"]["memory_only"] * 1e3
        # The fewest passes over the field a cycle needs: one read for steps 2-5's statistics,
        # the step's read and write (next written into F's double buffer instead of copied), one
        # read for steps 8-10, plus Ef and the wave.
        fused_cycle = B * (4 * 64 + 2) * R ** 3 * F32
        fused_rps = B / (fused_cycle / h200["bandwidth"]) 
        p(f"B = {B}: H200 floor as written {robots_per_s:,.0f} robot-cycles/s ({memory_rps:,.0f} "
          f"counting bytes alone); a cycle fused to 4 passes over the field moves {fmt_mb(fused_cycle)} MB: "
          f"{fused_rps:,.0f} robot-cycles/s at the H200's bandwidth")
        p(f"B = {B}: copy of the field "
          f"{fmt_mb(cyc['copy_bytes'])} MB; a field step fused to one read and one write moves "
          f"{fmt_mb(fused)} MB ({fused / cyc['copy_bytes']:.2f}x the copy); the field and the step's "
          f"workspace ({fmt_mb(resident)} MB) {'fit' if resident < h200['l2_bytes'] else 'do not fit'} "
          f"the 50 MB L2")


def global_kernels(cuda_dir):
    names = {}
    for file in sorted(os.listdir(cuda_dir)):
        if file.endswith(".cu"):
            with open(os.path.join(cuda_dir, file), encoding="utf-8") as f:
                for name in re.findall(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)", f.read()):
                    names[name] = file
    return names


def check_sources(cuda_dir):
    """Every __global__ of brain/ops/cuda is in the model or in NOT_IN_FAST_CYCLE."""
    listed = {r["kernel"] for r in kernels(1, 32)}
    missing = [n for n in global_kernels(cuda_dir) if n not in listed and n not in NOT_IN_FAST_CYCLE]
    return missing


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--R", type=int, default=32, help="field resolution (default 32)")
    parser.add_argument("--B", type=int, nargs="+", default=[1, 16, 256], help="batches (default 1 16 256)")
    parser.add_argument("--S", type=int, default=24, help="sensory dim (default 24, as the bench)")
    parser.add_argument("--M", type=int, default=4, help="motor dim (default 4)")
    parser.add_argument("--A", type=int, default=8, help="attractor capacity (default 8)")
    parser.add_argument("--stores", type=float, default=0.0,
                        help="fraction of robots storing an attractor per cycle (bench: 0)")
    parser.add_argument("--pull-slots", type=int, default=0,
                        help="attractor slots pulling per robot (bench: 0)")
    parser.add_argument("--json", metavar="PATH", help="also write the model as JSON")
    parser.add_argument("--check-sources", action="store_true",
                        help="exit 1 if a __global__ kernel of brain/ops/cuda is not modelled")
    parser.add_argument("--cuda-dir", default=os.path.join(here, "..", "..", "brain", "ops", "cuda"))
    args = parser.parse_args(argv)
    if args.check_sources:
        missing = check_sources(args.cuda_dir)
        if missing:
            print("cost_model: kernels not in the model: " + ", ".join(missing), file=sys.stderr)
            return 1
        print(f"cost_model: all {len(global_kernels(args.cuda_dir))} __global__ kernels accounted for")
        return 0
    if args.R < 4 or any(b < 1 for b in args.B):
        parser.error("need R >= 4 and B >= 1")
    result = model(args.R, args.B, args.stores, args.pull_slots, args.S, args.M, args.A)
    print_tables(result)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
