#!/usr/bin/python3
"""Run a user's em-brain checkout, pinned, and write one legacy fixture folder.

The original field brain (UnifiedFieldBrain.process_robot_cycle, em-brain commit ef2bdb8) is
deterministic only under the pins P1-P7 (docs/legacy.md). This script applies them at
run time, by monkeypatching; no file of the checkout is edited:

  P1  torch.manual_seed / np.random.seed / random.seed(seed) just before the brain is built
  P2  CPU: torch.cuda / mps availability report False (brain and planner pick mps > cuda > cpu)
  P3  every `time` binding in the checkout's modules is a fake clock: time(), perf_counter()
      and monotonic() return t0 + n*dt during cycle n (and t0 during construction)
  P4  the strategic planner's discover_async: off (request recorded, dropped) or synchronous
  P5  torch.set_num_threads(1)
  P6  adaptive_configuration loaded before seeding (its first load benchmarks the hardware with
      ~2.4 M draws from the global generator)
  P7  BRAIN_BRAIN_* environment overrides removed; quiet mode; stdout of the brain -> stderr

The brain is built as the server's factory builds it (UnifiedBrainFactory.create: hierarchical
prediction, strategic planning and active vision enabled).

Usage (run with /usr/bin/python3, which has torch 1.13 and numpy):
  run_original.py --em-brain PATH --out DIR
      (--scenario NAME | --stream smooth|random|negative --rewards on|off --R N --S N --M N
       --cycles N --seed N | --inputs FILE.npy --R N --S N --M N --seed N)
      [--planner off|sync] [--dt 0.05] [--t0 1000.0] [--dump-fields K] [--em-brain-commit SHA]

Exit status: 0 written; 2 PATH is not a compatible em-brain checkout (one line on stderr);
1 anything else (bad arguments, the brain reported an error during a cycle).
"""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time as _real_time
import types

# P2 (first half) and P7 must act before torch or the checkout is imported.
os.environ["CUDA_VISIBLE_DEVICES"] = ""
for _key in [k for k in os.environ if k.startswith("BRAIN_")]:
    del os.environ[_key]

import numpy as np  # noqa: E402
import torch  # noqa: E402

T0_DEFAULT = 1000.0  # not 0: the original tests some timestamps for truthiness
DT_DEFAULT = 0.05

# The committed scenarios of brain/legacy/LEGACY.md: name -> (R, S, M, stream, rewards, cycles).
SCENARIOS = {
    "r16_s24m4_smooth": (16, 24, 4, "smooth", False, 150),
    "r16_s24m4_random_reward": (16, 24, 4, "random", True, 150),
    "r16_s24m4_negative_reward": (16, 24, 4, "negative", True, 150),
    "r16_s12m6_smooth_reward": (16, 12, 6, "smooth", True, 150),
    "r16_s12m6_random": (16, 12, 6, "random", False, 150),
    "r16_s12m6_negative": (16, 12, 6, "negative", False, 150),
    "r32_s24m4_smooth_reward": (32, 24, 4, "smooth", True, 300),
    # the state right after construction, then one cycle (smooth input) for the first draws
    "r16_s24m4_construction": (16, 24, 4, "smooth", False, 1),
    # the planner synchronous (--planner sync, implied by the name): its patterns arrive and steer
    "r16_s24m4_smooth_sync": (16, 24, 4, "smooth", False, 64),
    "r16_s12m6_negative_sync": (16, 12, 6, "negative", False, 64),
    "r16_s12m6_smooth_reward_sync": (16, 12, 6, "smooth", True, 64),
}

STRATEGIES = ["none", "existing", "resonant", "correlated", "empty"]
COGNITIVE_MODES = ["exploring", "dreaming", "exploiting", "balanced"]


class Incompatible(Exception):
    """PATH is not an em-brain checkout this script can pin."""


# ---------------------------------------------------------------------------------------------
# Input streams (generated here, stored in the fixture; the C++ side never regenerates them)
# ---------------------------------------------------------------------------------------------
def reward_schedule(n):
    """Reward of cycle n when rewards are on: 0.8 sin(2 pi n / 25), rounded to 1e-3.

    Crosses the original's |reward| > 0.1 threshold both ways (process_reward with positive and
    negative rewards) and spends ~12% of cycles below it."""
    return round(0.8 * np.sin(2.0 * np.pi * n / 25.0), 3)


def make_stream(kind, rewards, S, cycles, seed):
    """[cycles, S (+1 with rewards)] float64. random/negative draw from their own generator
    (numpy PCG64 seeded with seed + 1000), never from the global one the brain uses."""
    n = np.arange(cycles, dtype=np.float64)[:, None]
    i = np.arange(S, dtype=np.float64)[None, :]
    rng = np.random.default_rng(seed + 1000)
    if kind == "smooth":
        # slow sines, one phase per sensor, in [-0.6, 0.6]
        x = 0.6 * np.sin(2.0 * np.pi * n / 40.0 + 0.5 * i)
    elif kind == "random":
        x = rng.uniform(-1.0, 1.0, size=(cycles, S))
    elif kind == "negative":
        # every sensor negative, in [-0.8, -0.2]: resonance with the positive-biased field fails
        # and the imprint falls through to the empty location (its randn_like draw)
        x = -(0.2 + 0.6 * rng.random(size=(cycles, S)))
    else:
        raise ValueError(f"unknown stream {kind!r}")
    if rewards:
        r = np.array([reward_schedule(k) for k in range(cycles)], dtype=np.float64)[:, None]
        x = np.concatenate([x, r], axis=1)
    return np.ascontiguousarray(x, dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# P3: the fake clock
# ---------------------------------------------------------------------------------------------
class FakeClock:
    """Stands in for the `time` module inside the checkout's modules."""

    def __init__(self, t0, dt):
        self.t0, self.dt, self.n = float(t0), float(dt), 0
        self.reads = 0

    def now(self):
        self.reads += 1
        return self.t0 + self.n * self.dt

    def module(self):
        clock = self
        fake = types.ModuleType("time")
        for name in dir(_real_time):
            if not name.startswith("__"):
                setattr(fake, name, getattr(_real_time, name))
        fake.time = lambda: clock.now()
        fake.perf_counter = lambda: clock.now()
        fake.monotonic = lambda: clock.now()
        fake.time_ns = lambda: int(round(clock.now() * 1e9))
        fake.perf_counter_ns = fake.time_ns
        fake.monotonic_ns = fake.time_ns
        return fake


def pin_clock(clock, fake_module, prefix):
    """Rebind `time` (and any `from time import ...` functions) in every loaded checkout module."""
    real_funcs = {getattr(_real_time, f): f for f in
                  ("time", "perf_counter", "monotonic", "time_ns", "perf_counter_ns")}
    patched = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == prefix or name.startswith(prefix + ".")):
            continue
        for attr, val in list(vars(mod).items()):
            if val is _real_time:
                setattr(mod, attr, fake_module)
                patched.append(f"{name}.{attr}")
            elif callable(val) and val in real_funcs:
                setattr(mod, attr, getattr(fake_module, real_funcs[val]))
                patched.append(f"{name}.{attr}")
    return patched


# ---------------------------------------------------------------------------------------------
# Draw trace: which generator calls happen in which cycle (debugging aid; changes no number)
# ---------------------------------------------------------------------------------------------
class DrawTrace:
    def __init__(self):
        self.cycle = "construction"
        self.log = {"construction": []}
        self.keep = False      # keep the drawn tensors (construction fixture)
        self.kept = []

    def record(self, op, out):
        shape = list(out.shape) if hasattr(out, "shape") else []
        self.log.setdefault(self.cycle, []).append(f"{op}{shape}")
        if self.keep and torch.is_tensor(out):
            self.kept.append((self.cycle, op, out.detach().clone()))

    def install(self):
        trace = self

        def wrap(owner, name, label):
            orig = getattr(owner, name)

            def wrapper(*a, **k):
                out = orig(*a, **k)
                trace.record(label, out if out is not None else np.asarray([]))
                return out
            wrapper.__wrapped__ = orig
            setattr(owner, name, wrapper)

        for name in ("randn", "randn_like", "rand", "rand_like", "randint", "randint_like",
                     "normal", "randperm", "multinomial", "bernoulli"):
            wrap(torch, name, name)
        for name in ("uniform_", "normal_", "random_", "bernoulli_", "exponential_"):
            wrap(torch.Tensor, name, name)
        for name in ("randint", "normal", "rand", "randn", "random", "choice", "uniform",
                     "shuffle", "permutation"):
            wrap(np.random, name, "np." + name)


# ---------------------------------------------------------------------------------------------
# Loading and building the checkout
# ---------------------------------------------------------------------------------------------
REQUIRED_FILES = [
    "server/src/brains/field/unified_field_brain.py",
    "server/src/core/unified_brain_factory.py",
    "server/src/adaptive_configuration.py",
    "server/src/brains/field/evolved_field_dynamics.py",
    "server/src/brains/field/emergent_sensory_mapping.py",
    "server/src/brains/field/field_strategic_planner.py",
    "server/settings.json",
]


def need(obj, attr, what):
    if not hasattr(obj, attr):
        raise Incompatible(f"{what} has no {attr}")
    return getattr(obj, attr)


def import_checkout(path):
    path = os.path.abspath(path)
    for rel in REQUIRED_FILES:
        if not os.path.isfile(os.path.join(path, rel)):
            raise Incompatible(f"missing {rel}")
    sys.path.insert(0, os.path.join(path, "server"))
    try:
        with contextlib.redirect_stdout(sys.stderr):
            import importlib
            adaptive = importlib.import_module("src.adaptive_configuration")
            factory_mod = importlib.import_module("src.core.unified_brain_factory")
            ufb_mod = importlib.import_module("src.brains.field.unified_field_brain")
    except Exception as e:  # noqa: BLE001 - any import failure means "not compatible"
        raise Incompatible(f"cannot import the brain ({type(e).__name__}: {e})")
    need(adaptive, "load_adaptive_configuration", "src.adaptive_configuration")
    need(factory_mod, "UnifiedBrainFactory", "src.core.unified_brain_factory")
    ufb = need(ufb_mod, "UnifiedFieldBrain", "unified_field_brain")
    for m in ("process_robot_cycle", "enable_hierarchical_prediction",
              "enable_strategic_planning", "enable_active_vision", "_create_brain_state"):
        need(ufb, m, "UnifiedFieldBrain")
    return path, adaptive, factory_mod


def checkout_commit(path, given):
    if given:
        return given
    try:
        out = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        if out.returncode == 0:
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown (not a git checkout; pass --em-brain-commit)"


def build_brain(path, adaptive, factory_mod, R, S, M, seed, clock, trace):
    import random
    with contextlib.redirect_stdout(sys.stderr):
        # P6: the first load benchmarks the hardware with draws from the global generator
        adaptive.load_adaptive_configuration(os.path.join(path, "server", "settings.json"),
                                             suppress_output=True)
        factory = factory_mod.UnifiedBrainFactory({"quiet_mode": True})
        fake = clock.module()
        pin_clock(clock, fake, "src")
        trace.install()
        # P1: seed just before the brain is built
        torch.manual_seed(seed)
        np.random.seed(seed)
        random.seed(seed)
        wrapper = factory.create(spatial_resolution=R, sensory_dim=S, motor_dim=M)
    brain = need(wrapper, "brain", "UnifiedBrainWrapper")
    pin_clock(clock, fake, "src")  # modules imported lazily during construction
    for attr in ("field_dynamics", "sensory_mapping", "strategic_planner", "unified_field",
                 "topology_region_system", "predictive_field"):
        if getattr(brain, attr, None) is None:
            raise Incompatible(f"the built brain has no {attr}")
    for m in ("_find_existing_location", "_find_resonant_location",
              "_find_correlated_location", "_find_empty_location"):
        need(brain.sensory_mapping, m, "EmergentSensoryMapping")
    need(brain.strategic_planner, "discover_async", "FieldStrategicPlanner")
    need(brain.strategic_planner, "discover_strategic_pattern", "FieldStrategicPlanner")
    return brain


def pin_planner(brain, mode, clock, requests, discoveries):
    """P4: replace discover_async on the instance. With sync, `discoveries` gets one entry per
    discovery: (cycle, best score or None, real seconds the discovery took)."""
    planner = brain.strategic_planner

    if mode == "off":
        def discover_async(current_field, reward_signal, callback=None):
            requests.append(clock.n)
            return None
    else:
        def discover_async(current_field, reward_signal, callback=None):
            requests.append(clock.n)
            with contextlib.redirect_stdout(sys.stderr):
                started = _real_time.perf_counter()
                pattern = planner.discover_strategic_pattern(current_field.clone().detach(),
                                                             reward_signal, n_candidates=32)
                took = _real_time.perf_counter() - started
                discoveries.append((clock.n, None if pattern is None else float(pattern.score),
                                    took))
                if callback:
                    callback(pattern)
            return None
    planner.discover_async = discover_async


def watch_imprint(brain, box):
    """Record which of the four location searches gave the imprint location."""
    mapping = brain.sensory_mapping
    for code, name in enumerate(STRATEGIES[1:], start=1):
        orig = getattr(mapping, "_find_" + name + "_location")

        def wrapper(*a, _orig=orig, _code=code, **k):
            out = _orig(*a, **k)
            if out is not None:
                box["strategy"] = _code
                box["location"] = [int(v) for v in out]
            return out
        setattr(mapping, "_find_" + name + "_location", wrapper)


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------
def save_npy(out, name, array):
    np.save(os.path.join(out, name), np.ascontiguousarray(array), allow_pickle=False)


def torch_capability():
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def run(args):
    R, S, M, seed = args.R, args.S, args.M, args.seed
    if args.inputs:
        inputs = np.load(args.inputs, allow_pickle=False).astype(np.float64)
        if inputs.ndim != 2 or inputs.shape[1] < 1:
            raise SystemExit(f"{args.inputs}: want a 2-D array [N, L], got {inputs.shape}")
        stream, rewards = "file:" + os.path.basename(args.inputs), inputs.shape[1] > S
    else:
        inputs = make_stream(args.stream, args.rewards == "on", S, args.cycles, seed)
        stream, rewards = args.stream, args.rewards == "on"
    N = inputs.shape[0]
    if not np.all(np.isfinite(inputs)) or np.any(np.abs(inputs) > 10.0):
        raise SystemExit("inputs must be finite and within [-10, 10] (the original refuses others)")

    torch.set_num_threads(1)  # P5
    torch.cuda.is_available = lambda: False  # P2
    try:
        torch.backends.mps.is_available = lambda: False
    except AttributeError:
        pass

    path, adaptive, factory_mod = import_checkout(args.em_brain)
    clock = FakeClock(args.t0, args.dt)
    trace = DrawTrace()
    trace.keep = args.construction
    brain = build_brain(path, adaptive, factory_mod, R, S, M, seed, clock, trace)

    os.makedirs(args.out, exist_ok=True)
    out = args.out
    meta = {
        "seed": seed, "R": R, "S": S, "M": M, "stream": stream, "rewards": bool(rewards),
        "cycles": int(N), "dt": args.dt, "t0": args.t0,
        "clock": "cycle n (from 0) reads t0 + n*dt; construction reads t0",
        "planner": args.planner,
        "em_brain_commit": checkout_commit(path, args.em_brain_commit),
        "torch": torch.__version__, "numpy": np.__version__,
        "python": sys.version.split()[0], "cpu_capability": torch_capability(),
        "aten_cpu_capability_env": os.environ.get("ATEN_CPU_CAPABILITY", ""),
        "n_waves": int(brain.field_dynamics.wave_vectors.shape[0]),
        "reward_schedule": "0.8*sin(2*pi*n/25) rounded to 1e-3, element L=S+1" if rewards
                           and not args.inputs else None,
        "strategy_codes": STRATEGIES, "cognitive_mode_codes": COGNITIVE_MODES,
        "command": command_line(args),
    }

    if args.construction:
        write_construction(out, brain, trace)

    requests, discoveries = [], []
    pin_planner(brain, args.planner, clock, requests, discoveries)
    imprint = {}
    watch_imprint(brain, imprint)

    motors = np.zeros((N, M))
    cols = {k: np.zeros(N) for k in ("confidence", "field_abs_mean", "max_activation",
                                     "information", "novelty", "exploration_drive",
                                     "smoothed_confidence", "clock")}
    ints = {k: np.zeros(N, dtype=np.int64) for k in ("regions", "regions_activated",
                                                     "imprint_strategy", "cognitive_mode",
                                                     "planner_request", "planner_active")}
    location = np.full((N, 3), -1, dtype=np.int64)
    fields_dir = os.path.join(out, "fields")
    started = _real_time.time()
    for n in range(N):
        clock.n = n
        trace.cycle = str(n)
        imprint.clear()
        nreq = len(requests)
        with contextlib.redirect_stdout(sys.stderr):
            motor, state = brain.process_robot_cycle(inputs[n].tolist())
        if "error" in state:
            raise RuntimeError(f"the original failed in cycle {n}: {state['error']}")
        if len(motor) != M:
            raise RuntimeError(f"cycle {n}: {len(motor)} motors, expected {M}")
        motors[n] = motor
        cols["confidence"][n] = state["prediction_confidence"]
        cols["field_abs_mean"][n] = torch.mean(torch.abs(brain.unified_field)).item()
        cols["max_activation"][n] = state["max_activation"]
        info = state["information_state"]
        cols["information"][n] = info["information"]
        cols["novelty"][n] = info["novelty"]
        cols["exploration_drive"][n] = info["exploration_drive"]
        cols["smoothed_confidence"][n] = state["evolution_state"]["smoothed_confidence"]
        cols["clock"][n] = clock.t0 + n * clock.dt
        ints["regions"][n] = state["topology_regions"]["total"]
        ints["regions_activated"][n] = state["topology_regions"]["activated_now"]
        ints["imprint_strategy"][n] = imprint.get("strategy", 0)
        ints["cognitive_mode"][n] = COGNITIVE_MODES.index(state["cognitive_mode"])
        ints["planner_request"][n] = len(requests) > nreq
        ints["planner_active"][n] = brain.current_strategic_pattern is not None
        if "location" in imprint:
            location[n] = imprint["location"]
        if n < args.dump_fields:
            os.makedirs(fields_dir, exist_ok=True)
            save_npy(fields_dir, f"field_{n:04d}.npy", brain.unified_field.numpy())
        if N > 20 and ((n + 1) % 25 == 0 or n + 1 == N):
            el = _real_time.time() - started
            print(f"  cycle {n + 1}/{N}  {el:.0f} s  motors {np.round(motors[n], 3).tolist()}",
                  file=sys.stderr, flush=True)

    if args.construction:
        write_first_cycle_draws(out, trace, meta)
    save_npy(out, "inputs.npy", inputs)
    save_npy(out, "motors.npy", motors)
    for k, v in cols.items():
        save_npy(out, k + ".npy", v)
    for k, v in ints.items():
        save_npy(out, k + ".npy", v)
    save_npy(out, "imprint_location.npy", location)
    if args.planner == "sync":
        # one row per discovery: the cycle, the best candidate's score (NaN: none), real seconds
        rows = [(c, np.nan if sc is None else sc, t) for c, sc, t in discoveries]
        save_npy(out, "planner_discoveries.npy", np.array(rows, dtype=np.float64).reshape(-1, 3))
        meta["planner_discovery_seconds"] = [round(t, 3) for _, _, t in discoveries]
    with open(os.path.join(out, "draws.json"), "w") as f:
        json.dump(trace.log, f, separators=(",", ":"))
        f.write("\n")
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def command_line(args):
    """The command as given, with the checkout as $EM_BRAIN and paths relative to the repo."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    words, prev = [], ""
    for a in args.argv:
        if prev == "--em-brain":
            a = "$EM_BRAIN"
        elif prev in ("--out", "--inputs") and os.path.abspath(a).startswith(repo + os.sep):
            a = os.path.relpath(os.path.abspath(a), repo)
        words.append(a)
        prev = a
    return "/usr/bin/python3 scripts/legacy/run_original.py " + " ".join(words)


def write_construction(out, brain, trace):
    """The state right after construction and every drawn tensor, named as the original."""
    save_npy(out, "field.npy", brain.unified_field.numpy())
    fd = brain.field_dynamics
    save_npy(out, "wave_vectors.npy", fd.wave_vectors.numpy())
    hp = getattr(brain.predictive_field, "hierarchical_system", None)
    if hp is None or not hasattr(hp, "immediate_weights"):
        raise Incompatible("no hierarchical predictor with immediate_weights")
    for name in ("immediate_weights", "short_term_weights", "long_term_weights",
                 "abstract_weights"):
        save_npy(out, name + ".npy", getattr(hp, name).numpy())
    # the raw draws that are not visible as state: the wave vectors before normalisation
    kept = [(op, t) for cyc, op, t in trace.kept if cyc == "construction"]
    small = [t for op, t in kept if op == "randn" and t.dim() == 2 and t.shape[1] == 3]
    if len(small) != 1:
        raise Incompatible("could not identify the wave-vector draw")
    save_npy(out, "wave_vectors_drawn.npy", small[0].numpy())
    with open(os.path.join(out, "construction_draws.json"), "w") as f:
        json.dump([f"{op}{list(t.shape)}" for op, t in kept], f)
        f.write("\n")
    trace.kept = []  # keep recording: cycle 0's draws follow


def write_first_cycle_draws(out, trace, meta):
    """Cycle 0's draws: small ones whole, large ones as their first 4096 values."""
    names = []
    for k, (cyc, op, t) in enumerate([x for x in trace.kept if x[0] == "0"]):
        flat = t.reshape(-1)
        name = f"cycle0_draw{k}_{op}" + ("" if flat.numel() <= 4096 else "_head")
        save_npy(out, name + ".npy", flat[:4096].numpy())
        names.append({"file": name + ".npy", "op": op, "shape": list(t.shape)})
    meta["cycle0_draws"] = names
    trace.kept = []


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit 1: exit 2 means "not a compatible checkout"
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def parse(argv):
    p = _Parser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--em-brain", required=True, help="em-brain checkout (its root)")
    p.add_argument("--out", required=True, help="fixture folder to write")
    p.add_argument("--scenario", choices=sorted(SCENARIOS))
    p.add_argument("--stream", choices=["smooth", "random", "negative"])
    p.add_argument("--rewards", choices=["on", "off"])
    p.add_argument("--inputs", help="[N, L] .npy of inputs (float); reward iff L > S")
    p.add_argument("--R", type=int)
    p.add_argument("--S", type=int)
    p.add_argument("--M", type=int)
    p.add_argument("--cycles", type=int)
    p.add_argument("--seed", type=int)
    p.add_argument("--planner", choices=["off", "sync"],
                   help="the planner's discovery (default off; a scenario named *_sync: sync)")
    p.add_argument("--dt", type=float, default=DT_DEFAULT)
    p.add_argument("--t0", type=float, default=T0_DEFAULT)
    p.add_argument("--dump-fields", type=int, default=0, metavar="K",
                   help="also write fields/field_NNNN.npy after each of the first K cycles")
    p.add_argument("--em-brain-commit", help="commit to record when PATH is not a git checkout")
    a = p.parse_args(argv)
    a.argv = argv
    a.construction = False
    if a.scenario:
        if a.stream or a.inputs or a.rewards or a.cycles:
            p.error("--scenario fixes the stream, rewards and cycles")
        R, S, M, stream, rewards, cycles = SCENARIOS[a.scenario]
        a.R, a.S, a.M, a.stream, a.cycles = R, S, M, stream, cycles
        a.rewards = "on" if rewards else "off"
        a.seed = 42 if a.seed is None else a.seed
        a.construction = a.scenario.endswith("_construction")
        implied = "sync" if a.scenario.endswith("_sync") else "off"
        if a.planner not in (None, implied):
            p.error(f"--scenario {a.scenario} runs the planner {implied}")
        a.planner = implied
    elif a.inputs:
        if a.stream or a.rewards or a.cycles:
            p.error("--inputs replaces --stream, --rewards and --cycles")
    else:
        missing = [f for f in ("stream", "rewards", "cycles") if getattr(a, f) is None]
        if missing:
            p.error("give --scenario, --inputs, or --stream with --rewards and --cycles")
    a.planner = a.planner or "off"
    for f in ("R", "S", "M", "seed"):
        if getattr(a, f) is None:
            p.error(f"--{f} is required")
    if min(a.R, a.S, a.M) < 1 or (a.cycles is not None and a.cycles < 1) or a.seed < 0:
        p.error("R, S, M, cycles must be positive and seed non-negative")
    return a


def main(argv):
    args = parse(argv)
    try:
        run(args)
    except Incompatible as e:
        print(f"run_original.py: {args.em_brain} is not a compatible em-brain checkout: {e}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
