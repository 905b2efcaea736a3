#!/usr/bin/python3
"""Python reference of the fieldbrain v1 cycle (docs/cycle.md), plain PyTorch ops.

Written from docs/cycle.md (the op-by-op spec; its "section" numbers, used below, name
the parts of the original em-brain cycle, listed at the end of docs/cycle.md). The C++ brain is written independently
from the same text; the two must agree to 1e-5 every cycle. Comments number the docs/cycle.md
steps ("---- 4." = "The cycle" step 4, "4.5" its item 5, "7.3" = field step item 3);
"Cn" below means docs/cycle.md step n.

Run with Debian's /usr/bin/python3 (python3-torch 1.13):
  /usr/bin/python3 scripts/reference/fieldbrain_ref.py fixture --out DIR [--R 16 --B 1 ...]
  /usr/bin/python3 scripts/reference/fieldbrain_ref.py time --R 32 --B 1 --cycles 20
  python3 scripts/reference/fieldbrain_ref.py time-step --device cuda --mode compile --R 32 --B 16
  /usr/bin/python3 scripts/reference/fieldbrain_ref.py replay RECORDING_DIR [--out motors.npy]
field_step runs on the device of its tensors (cpu or cuda); the whole reference cycle
(FieldBrainRef, `fixture`, `time` and `replay`) runs on the CPU.

Decisions (where docs/cycle.md leaves a choice; the most literal reading was taken):
 D1  Products written a.b.c are evaluated left to right ((a*b)*c); sums a+b+c likewise;
     "Sigma_a L_a.dif[a]" is accumulated x, y, z into one tensor, then added to X2.
 D2  Host-only quantities (those that depend only on the cycle number n or on host inputs:
     m and 1-m of C1, base of C1, the sigma base of C7.6, 0.1*sin(0.01n), phi = 0.1n,
     attractor strength 0.95^age) are computed in double and enter float32 tensor ops
     as Python scalars (cast to float by torch). Everything else is float32 tensors.
 D3  Ring means sum the masked slots with torch.sum over the slot axis (slot order), then
     divide by the docs/cycle.md denominator.
 D4  C7.5 error modulation: Mod is built for all 16 channels (Mod[8:12] = D1[8:12]) and the
     blend (1-wE)*D1 + wE*Mod is applied to all 16 channels (so 8:12 goes through the
     blend's float rounding too). Robots with has_ef = 0 keep D1 exactly (torch.where).
 D5  C7.8: lap_a = (roll(Fn,+1,a) + roll(Fn,-1,a)) - 2*Fn; F = Fn + 0.05*((lap_x/2 +
     lap_y/2) + lap_z/2). Axes x, y, z are dims 2, 3, 4 of [B,64,R,R,R].
 D6  C7.9: inf = (P - F) * (st*valence*0.01) * ((1 + cosv)/2)  [or (1 - cosv)/2], the
     host scalar st*valence*0.01 computed in double; Sigma inf accumulated in slot order
     into one tensor, then F = F + Sigma.
 D7  C2: W[k] = W[k] + lr_k * outer(enc_k, e_k) (outer product first). int(10*m_k) is a
     float32 product truncated toward zero. U_h channels written with torch.where on the
     cube mask (no -0 from multiplying a mask).
 D8  C3: Ef is accumulated site by site (i = 0..15) into a zero tensor, each site adding
     +min(1,2avg) on cube(i,1) or -(0.1*(1-avg)) on cube(i,2); then Ef + 0.05*mean|e|.
 D9  C7.2: wave term 2*0.0005 is the single constant 0.001 (identical in float);
     X2 = X1 + (0.001*eps_sp + 0.001*wave) * drive. wave = sum over w = 0..4 (in order) of
     sin(phi + ((wv0*x + wv1*y) + wv2*z)/3) * mask_w, x,y,z float32 integer grids.
 D10 Static tables: P and the 0.8^k blob kernel are built in double and rounded to float32
     once. site(i) is int() of the real-valued expression (i%4)*R/4 + R/8 (as legacy Python;
     differs from integer division for some R, e.g. R = 14); P's fx, fy, fz are the floor of
     the exact quotient (same as int() of the real value for every R, S).
     nov_idx = linspace(0,4095,512) (float32) .long() (== floor(k*4095/511)).
 D11 C5 novelty: ages n - ts as float32, exp(-age/500) in float32, sims from one
     batched matmul nov[B,200,512] @ v[B,512,1].
 D12 C9 hierarchical predictions: hpred[k] = tanh(enc_k[B,1,16] @ W[:,k][B,16,S]) (bmm).
     comb = (((a0*h0 + a1*h1) + a2*h2) + a3*h3) / (((a0+a1)+a2)+a3).
 D13 Per-cycle draws are made at the start of the cycle into preallocated buffers, all
     robots at once: every element is a pure function of (robot seed, cycle, stream,
     index) (philox_ref.py), so order does not matter.
 D14 Telemetry imprint_strength/decay_rate/internal_drive/exploration_drive are this
     cycle's modulation values (imp, decay, drive, explore of C5); field stats in the
     fixture are computed in float64 and stored as float32.
 D15 The fixture's smooth/random/reward inputs depend on the robot key (not on its batch
     index), so robot k gets the same stream alone and inside a batch; "mixed" chooses the
     kind by batch index (smooth, random, zeros, reward, negative, repeating). "negative"
     (an extra kind: uniform [-1,-0.05]) is the one that exercises the empty-location
     strategy (C4.6); the other kinds always find an existing or resonant location.
 D16 All robots of one FieldBrainRef step together, so the cycle number n, ring counts
     (except the per-robot mapping memory) and has_ef (= n >= 1) are shared host values;
     skip/has_input, reward branches and attractor bookkeeping are per robot on the host.
     Sites with no sensor (S < 16) are skipped in C3; U_h writes channels 16k + i, i < S.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as tnf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import philox_ref as philox  # noqa: E402  (the generator of docs/cycle.md "Randomness")

C = 64
MASK64 = (1 << 64) - 1


# ----------------------------------------------------------------------------- seeds
def robot_seed(seed, key):
    """docs/cycle.md Randomness: splitmix64 finaliser of seed + golden * (key + 1), 63 bits."""
    z = (seed + 0x9E3779B97F4A7C15 * (key + 1)) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    z = z ^ (z >> 31)
    return z & 0x7FFFFFFFFFFFFFFF


# ----------------------------------------------------------------------------- rings
class Ring:
    """Fixed-capacity ring per robot (docs/cycle.md "Ring buffers").

    data [B, N, *item]; count[b] = pushes ever. Push writes slot count mod N.
    Age of slot j = (count - 1 - j) mod N; valid when j < min(count, N).
    """

    def __init__(self, B, N, item_shape=(), dtype=torch.float32):
        self.B, self.N = B, N
        self.data = torch.zeros((B, N) + tuple(item_shape), dtype=dtype)
        self.count = [0] * B

    def push(self, values, robots=None):
        """values [B, *item]; pushes values[b] for every robot b (or only those in robots)."""
        for b in (range(self.B) if robots is None else robots):
            self.push_one(b, values[b])

    def push_one(self, b, value):
        self.data[b, self.count[b] % self.N] = value
        self.count[b] += 1

    def to(self, device):
        self.data = self.data.to(device)
        return self

    def ages(self, b):
        j = torch.arange(self.N, device=self.data.device)
        return (self.count[b] - 1 - j) % self.N

    def valid(self, b):
        return torch.arange(self.N, device=self.data.device) < min(self.count[b], self.N)

    def mean_ages(self, k1, k2):
        """Mean over valid slots with k1 <= age < k2; denominator min(k2, count) - k1
        (0 when that is <= 0). Returns [B, *item]."""
        out = torch.zeros((self.B,) + tuple(self.data.shape[2:]), dtype=self.data.dtype,
                          device=self.data.device)
        for b in range(self.B):
            denom = min(k2, self.count[b]) - k1
            if denom <= 0:
                continue
            age = self.ages(b)
            sel = self.valid(b) & (age >= k1) & (age < k2)
            sel = sel.view((self.N,) + (1,) * (self.data.dim() - 2))
            out[b] = torch.where(sel, self.data[b], torch.zeros((), dtype=self.data.dtype,
                                                                device=self.data.device)).sum(0) / denom
        return out

    def mean_last(self, k):
        return self.mean_ages(0, k)

    def last(self, b, i):
        """The i-th newest entry (i = 0 newest) of robot b."""
        return self.data[b, (self.count[b] - 1 - i) % self.N]


# Three float32 ops of the cycle gave other bits under torch 2.6 than under 1.13 on the same
# inputs: sin (1 ulp), cosine_similarity (1e-5 over a flattened field) and a row's 2-norm (1 ulp).
# Computed in float64 and rounded once they are the same on both (brain/portable_math.h).
def sin64(x):
    return torch.sin(x.double()).float()


def unit_rows64(x):
    """x / (its rows' 2-norm + 1e-8)."""
    return x / (torch.linalg.vector_norm(x.double(), 2, dim=1, keepdim=True).float() + 1e-8)


def cosine64(a, b, dim):
    return tnf.cosine_similarity(a.double(), b.double(), dim=dim, eps=1e-8).float()


# ----------------------------------------------------------------------------- field step
_KERNEL_CACHE = {}


def _kernels(dtype=torch.float32, device="cpu"):
    """Depthwise conv3d weights for C7.3 (second difference per axis) and C7.4 (coupling),
    made once per (dtype, device) on the device of the field they convolve."""
    key = (dtype, str(device))
    if key in _KERNEL_CACHE:
        return _KERNEL_CACHE[key]
    lap = torch.tensor([1.0, -2.0, 1.0], dtype=dtype, device=device)
    kx = lap.view(1, 1, 3, 1, 1).repeat(48, 1, 1, 1, 1).contiguous()
    ky = lap.view(1, 1, 1, 3, 1).repeat(48, 1, 1, 1, 1).contiguous()
    kz = lap.view(1, 1, 1, 1, 3).repeat(48, 1, 1, 1, 1).contiguous()
    kc = torch.full((48, 1, 3, 3, 3), 0.1, dtype=dtype, device=device)
    kc[:, :, 1, 1, 1] = 0.0
    _KERNEL_CACHE[key] = (kx, ky, kz, kc)
    return _KERNEL_CACHE[key]


def field_step(field, noise, wave, ef, scalars):
    """docs/cycle.md step 7, items 1-8 (INTERFACE.md "The field step").

    field [B,64,R,R,R] (not modified), noise [B,48,R,R,R] (eps_sp), wave [B,R,R,R],
    ef [B,R,R,R], scalars [B,8] = (decay, drive, explore, sigma, has_ef, 0, 0, 0).
    Returns the field after 7.8 (global periodic diffusion).
    """
    B = field.shape[0]
    kx, ky, kz, kc = _kernels(field.dtype, field.device)

    def sc(i):
        return scalars[:, i].reshape(B, 1, 1, 1, 1)

    decay, drive, explore, sigma, has_ef = sc(0), sc(1), sc(2), sc(3), scalars[:, 4]

    X = field[:, 0:48]
    D = field[:, 48:64]
    dec = torch.sigmoid(D[:, 0:4])
    dif = torch.tanh(D[:, 4:8]) * 0.1
    cw = D[:, 8:12]
    pl = torch.sigmoid(D[:, 12:16])
    gmu = decay * 0.999

    # 7.1 differential decay: channel c < 32 times f_{c mod 4}; 32..47 times mean_k(dec)*gmu,
    # then the shift-by-one momentum computed from those products.
    f = dec * gmu                                                     # [B,4,R,R,R]
    R = field.shape[2]
    Xs = (X[:, 0:32].reshape(B, 8, 4, R, R, R) * f.unsqueeze(1)).reshape(B, 32, R, R, R)
    T = X[:, 32:48] * (dec.mean(1, keepdim=True) * gmu)
    T1 = torch.cat([0.85 * T[:, 0:1], 0.85 * T[:, 1:16] + 0.15 * T[:, 0:15]], 1)
    X1 = torch.cat([Xs, T1], 1)

    # 7.2 spontaneous activity (wave broadcast to the 48 channels), D9
    X2 = X1 + (0.001 * noise + 0.001 * wave.unsqueeze(1)) * drive

    # 7.3 learned diffusion: zero-padded [1,-2,1] along each axis, depthwise (groups = 48)
    Lx = tnf.conv3d(X2, kx, padding=(1, 0, 0), groups=48)
    Ly = tnf.conv3d(X2, ky, padding=(0, 1, 0), groups=48)
    Lz = tnf.conv3d(X2, kz, padding=(0, 0, 1), groups=48)
    acc = Lx * dif[:, 0:1]
    acc = acc + Ly * dif[:, 1:2]
    acc = acc + Lz * dif[:, 2:3]
    X3 = X2 + acc

    # 7.4 coupling: 0.1 x sum of the 26 neighbours of tanh(X3 * pl0), zero padding
    Aq = torch.tanh(X3 * pl[:, 0:1])
    N = tnf.conv3d(Aq, kc, padding=1, groups=48)
    X4 = X3 + N * cw.mean(1, keepdim=True) * pl[:, 1:2]

    # 7.5 dynamics self-modification (statistics over the 48 channels per voxel)
    aX4 = X4.abs()
    E = aX4.mean(1, keepdim=True)
    V = X4.var(1, unbiased=True, keepdim=True)
    Sp = (aX4 < 0.1).to(X4.dtype).mean(1, keepdim=True)
    U = torch.zeros_like(D)
    U[:, 0:1] = -E * sigma
    U[:, 4:5] = V * sigma
    U[:, 8:9] = 0.5 * Sp * sigma
    U[:, 12:13] = 0.5 * (E * explore - 0.5) * sigma
    D1 = 0.95 * D + 0.05 * U

    # error-field resource allocation (D4)
    aef = ef.abs()
    mE = (aef / (aef.amax(dim=(1, 2, 3)).reshape(B, 1, 1, 1) + 1e-8)).unsqueeze(1)   # [B,1,R,R,R]
    Mod = D1.clone()
    Mod[:, 0:4] = 0.9 * D1[:, 0:4] + 0.1 * (1 - 0.5 * mE)
    Mod[:, 4:8] = 0.9 * D1[:, 4:8] + 0.1 * (0.2 * mE - 0.1)
    Mod[:, 12:16] = 0.9 * D1[:, 12:16] + 0.1 * torch.sigmoid(2 * mE - 0.5)
    wE = torch.clamp(aef.mean(dim=(1, 2, 3)), max=0.5).reshape(B, 1, 1, 1, 1)
    blended = (1 - wE) * D1 + wE * Mod
    D1 = torch.where((has_ef > 0.5).reshape(B, 1, 1, 1, 1), blended, D1)

    # 7.7 NaN -> 0, per-robot squash of the content block, clamp of the dynamics block
    Fn = torch.cat([X4, D1], 1)
    Fn = torch.where(torch.isnan(Fn), torch.zeros((), dtype=Fn.dtype, device=Fn.device), Fn)
    Xn = Fn[:, 0:48]
    big = Xn.abs().amax(dim=(1, 2, 3, 4)) > 2.0
    Xn = torch.where(big.reshape(B, 1, 1, 1, 1), torch.tanh(Xn), Xn)
    Dn = torch.clamp(Fn[:, 48:64], -5.0, 5.0)
    Fn = torch.cat([Xn, Dn], 1)

    # 7.8 global periodic diffusion (D5)
    lap = None
    for axis in (2, 3, 4):
        la = (torch.roll(Fn, 1, axis) + torch.roll(Fn, -1, axis)) - 2 * Fn
        lap = la / 2 if lap is None else lap + la / 2
    return Fn + 0.05 * lap


# ----------------------------------------------------------------------------- the brain
class FieldBrainRef:
    """B robots sharing (S, M, R); state tensors carry a leading B dim (channels first)."""

    LR = (0.3, 0.1, 0.03, 0.01)
    GAINS = (1.0, 0.5, 0.3, 0.2)

    def __init__(self, R=32, S=24, M=4, A=8, seed=42, keys=(0,), device="cpu"):
        if not (8 <= R <= 128 and 1 <= S <= 1024 and 1 <= M <= 1024 and A >= 1 and len(keys) >= 1):
            raise ValueError("bad config R=%s S=%s M=%s A=%s keys=%s" % (R, S, M, A, keys))
        self.R, self.S, self.M, self.A = R, S, M, A
        self.seed, self.keys = seed, list(keys)
        B = self.B = len(self.keys)
        f32 = torch.float32
        self._build_tables()

        # ---- construction, per robot: pure functions of the robot's Philox seed (cycle 0),
        # docs/cycle.md "Randomness" (philox_ref.py).
        self.robot_seeds = [robot_seed(seed, key) for key in self.keys]
        self.F = torch.empty(B, C, R, R, R, dtype=f32)
        self.wv = torch.zeros(B, 5, 3, dtype=f32)
        self.wmask = torch.zeros(B, 5, dtype=f32)
        self.n_waves = [0] * B
        self.W = torch.empty(B, 4, 16, S, dtype=f32)
        for b, rs in enumerate(self.robot_seeds):
            # 1. field: one normal stream over [64,R,R,R], scaled and shifted per channel block
            z = philox.normals(rs, 0, philox.STREAM_INITIAL_FIELD, C * R ** 3)[0].reshape(C, R, R, R)
            self.F[b, 0:48] = z[0:48].mul(0.2).add(0.05)
            self.F[b, 48:52] = z[48:52].mul(0.1).add(2.0)
            self.F[b, 52:56] = z[52:56].mul(0.05)
            self.F[b, 56:60] = z[56:60].mul(0.05)
            self.F[b, 60:64] = z[60:64].mul(0.2)
            # 2. number of wave vectors: 3 + (word 0 of block 0) mod 3
            nw = 3 + int(philox.words(rs, 0, philox.STREAM_WAVE_COUNT, 1)[0][0, 0]) % 3
            self.n_waves[b] = nw
            # 3. wave vectors, each row normalised
            v = philox.normals(rs, 0, philox.STREAM_WAVE_VECTORS, 3 * nw)[0].reshape(nw, 3)
            v = unit_rows64(v)
            self.wv[b, :nw] = v
            self.wmask[b, :nw] = 1.0
            # 5. hierarchical weights (xavier-uniform bounds): (2u - 1) * beta_k
            u = philox.uniforms(rs, 0, philox.STREAM_HIERARCHY, 4 * 16 * S)[0].reshape(4, 16, S)
            for k in range(4):
                beta = torch.tensor(self.GAINS[k] * math.sqrt(6.0 / (16 + S)), dtype=torch.float64).to(f32)
                self.W[b, k] = (u[k] * 2 - 1) * beta
        self.init_field = self.F.clone()

        # ---- state (docs/cycle.md "State")
        z = lambda *s: torch.zeros(*s, dtype=f32)
        full = lambda v: torch.full((B,), v, dtype=f32)
        self.hpred = z(B, 4, S)
        self.pred = z(B, S)
        self.pc = z(B, S)
        self.last_err = z(B, S)
        self.conf = full(0.5)
        self.si = full(0.5)
        self.sc = full(0.5)
        self.plateau = full(0.0)
        self.cwi = [0] * B
        self.sigma = full(0.01)
        self.prev_imp = full(0.5)
        self.prev_amp = full(1.0)
        self.has_ef = False          # = (cycle >= 1) for every robot of this batch
        self.boost = full(1.0)
        self.Ef = z(B, R, R, R)
        self.occ = z(B, R, R, R)
        self.n_active = full(0.0)
        self.cycle = 0
        # rings
        self.hist = Ring(B, 1000, (S,))
        self.recent = Ring(B, 3, (S,))
        self.herr = [Ring(B, 50) for _ in range(4)]
        self.perr = Ring(B, 50)
        self.pimp = Ring(B, 50)
        self.nov = Ring(B, 200, (512,))
        self.nov_ts = Ring(B, 200)
        self.map = Ring(B, 100, (S,))
        self.map_loc = Ring(B, 100, (3,), dtype=torch.int64)
        # attractor bank (ring of A slots); bookkeeping on the host
        self.att = torch.zeros(B, A, C, R, R, R, dtype=f32)
        self.att_strength = [[0.0] * A for _ in range(B)]
        self.att_valence = [[0.0] * A for _ in range(B)]
        self.att_age = [[0] * A for _ in range(B)]
        self.att_valid = [[False] * A for _ in range(B)]
        self.att_count = [0] * B
        # per-cycle draw buffers (D13)
        self.eps_loc = z(B, R, R, R)
        self.eps_sp = z(B, 48, R, R, R)
        self.eps_m = z(B, max(M - 4, 0))
        self.eps_x = z(B, M)
        # modulation (telemetry)
        self.mod = {k: full(v) for k, v in dict(novelty=1.0, explore=0.5, drive=0.5, imp=0.5,
                                                 amp=1.0, decay=0.999).items()}
        self.last_s = full(0.0)
        self.cycle_time_ms = 0.0
        self._move_to(torch.device(device))

    def _move_to(self, device):
        """Built on the CPU (the same draws on every device), then every tensor of the state and
        of the static tables moves to `device`; step() creates its tensors there."""
        self.dev = device
        for name, value in list(vars(self).items()):
            if torch.is_tensor(value):
                setattr(self, name, value.to(device))
            elif isinstance(value, Ring):
                value.to(device)
            elif isinstance(value, list) and value and isinstance(value[0], Ring):
                for ring in value:
                    ring.to(device)
            elif isinstance(value, dict):
                setattr(self, name, {k: v.to(device) if torch.is_tensor(v) else v
                                     for k, v in value.items()})

    # -------------------------------------------------------------------- static tables
    def _build_tables(self):
        R, S = self.R, self.S
        # site(i) and cube(i, s) (clipped), s = 0..3 (0 unused)
        self.sites = []
        for i in range(16):
            x = int((i % 4) * R / 4 + R / 8)
            y = int((i // 4) * R / 4 + R / 8)
            self.sites.append((x, y, R // 2))
        self.cubes = torch.zeros(4, 16, R, R, R, dtype=torch.bool)
        for s in range(1, 4):
            for i, (x, y, zz) in enumerate(self.sites):
                self.cubes[s, i, max(0, x - s):min(R, x + s + 1), max(0, y - s):min(R, y + s + 1),
                           max(0, zz - s):min(R, zz + s + 1)] = True
        # resonant projection P [R^3, S] (D10)
        g = int(math.ceil(math.sqrt(S)))
        P = torch.zeros(R, R, R, S, dtype=torch.float64)
        for i in range(S):
            fx, fy, fz = ((i % g) * R) // g, ((i // g) * R) // g, (i * R) // S
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for dz in (-1, 0, 1):
                        vx = min(max(fx + dx, 0), R - 1)
                        vy = min(max(fy + dy, 0), R - 1)
                        vz = min(max(fz + dz, 0), R - 1)
                        P[vx, vy, vz, i] += 0.95 ** (abs(dx) + abs(dy) + abs(dz))
        self.P = P.reshape(R * R * R, S).to(torch.float32).contiguous()
        self.lin = torch.linspace(-1, 1, R)
        self.nov_idx = torch.linspace(0, 4095, 512).long()
        # imprint blob kernel 0.8^(|dx|+|dy|+|dz|), [5,5,5]
        d = torch.arange(-2, 3, dtype=torch.float64).abs()
        self.blob = (0.8 ** (d.view(5, 1, 1) + d.view(1, 5, 1) + d.view(1, 1, 5))).to(torch.float32)
        # integer coordinate grids for the wave
        ar = torch.arange(R, dtype=torch.float32)
        self.gx = ar.view(R, 1, 1).expand(R, R, R).contiguous()
        self.gy = ar.view(1, R, 1).expand(R, R, R).contiguous()
        self.gz = ar.view(1, 1, R).expand(R, R, R).contiguous()
        # sensor -> site / cell tables
        self.site_sensors = [list(range(i, S, 16)) for i in range(16)]
        j = torch.arange(S)
        self.sensor_cell = j % 64
        self.sensor_tch = j % 16

    # -------------------------------------------------------------------- helpers
    def _draw_cycle(self):
        """Per-cycle draws: the robots' Philox streams of (seed, cycle n) (D13)."""
        B, R, M = self.B, self.R, self.M
        seeds = torch.tensor(self.robot_seeds, dtype=torch.int64)
        n = self.cycle
        self.eps_loc.copy_(philox.normals(seeds, n, philox.STREAM_EMPTY_LOCATION, R ** 3).reshape(B, R, R, R))
        self.eps_sp.copy_(philox.normals(seeds, n, philox.STREAM_SPONTANEOUS, 48 * R ** 3).reshape(B, 48, R, R, R))
        if M > 4:
            self.eps_m.copy_(philox.normals(seeds, n, philox.STREAM_EXTRA_MOTORS, M - 4))
        self.eps_x.copy_(philox.normals(seeds, n, philox.STREAM_EXPLORATION, M))

    def _wave(self, n):
        phi = 0.1 * n
        wave = torch.zeros(self.B, self.R, self.R, self.R, device=self.dev)
        for w in range(5):
            v = self.wv[:, w].reshape(self.B, 3, 1, 1, 1)
            dot = v[:, 0] * self.gx + v[:, 1] * self.gy + v[:, 2] * self.gz
            wave = wave + sin64(phi + dot / 3) * self.wmask[:, w].reshape(self.B, 1, 1, 1)
        return wave

    @staticmethod
    def _unravel(idx, R):
        return (idx // (R * R), (idx // R) % R, idx % R)

    # -------------------------------------------------------------------- the cycle
    def step(self, sensors, reward):
        t0 = time.perf_counter()
        B, R, S, M = self.B, self.R, self.S, self.M
        dev = self.dev
        a = torch.as_tensor(sensors, dtype=torch.float32).to(dev)
        r = torch.as_tensor(reward, dtype=torch.float32).to(dev)
        zero = torch.zeros((), device=dev)
        minus_inf = torch.full((), -float("inf"), device=dev)
        if tuple(a.shape) != (B, S):
            raise ValueError("sensors must have shape [%d, %d], got %s" % (B, S, list(a.shape)))
        if tuple(r.shape) != (B,):
            raise ValueError("reward must have shape [%d], got %s" % (B, list(r.shape)))
        if not (torch.isfinite(a).all() and torch.isfinite(r).all()):
            raise ValueError("sensors and reward must be finite")
        a, r = a.clone(), r.clone()
        n = self.cycle
        has_input = [(a[b].abs() > 0.01).any().item() for b in range(B)]
        skip = [not h for h in has_input]
        r_host = [float(r[b]) for b in range(B)]
        self._draw_cycle()
        F = self.F

        # ---- 1. score the last prediction (section 3.3)
        if n >= 1:
            e = a - self.pred
            self.last_err = e
            err = e.abs().mean(1)
            mc = torch.clamp(self.n_active / 50, max=1.0)
            w = 1.5 - 0.5 * mc
            base = 0.2 * (1 - mc) if n < 50 else torch.zeros(B, device=dev)
            raw = torch.maximum(base, 1 - torch.clamp(err * w, max=1.0))
            m = 0.9 - min(0.2, n / 1000)
            self.conf = m * self.conf + (1 - m) * raw
        else:
            self.conf = torch.full((B,), 0.5, device=dev)

        # ---- 2. hierarchical errors (section 4.2); Fc = F at cycle start
        self.hist.push(a)
        U_h = torch.zeros(B, C, R, R, R, device=dev)
        if n >= 1:
            h = self.hist.count[0]
            targets = [a, self.hist.mean_last(10), self.hist.mean_last(100), self.hist.mean_last(1000)]
            nS = min(S, 16)
            for k in range(4):
                if not (k == 0 or (k == 1 and h >= 10) or (k >= 2 and h >= 100)):
                    continue
                tk = targets[k]
                ek = tk - self.hpred[:, k]
                mk = ek.abs().mean(1)                                       # [B]
                self.herr[k].push(mk)
                enc = F[:, 16 * k:16 * k + 16].mean(dim=(2, 3, 4))          # [B,16]
                outer = enc.unsqueeze(2) * ek.unsqueeze(1)                  # [B,16,S]
                self.W[:, k] = self.W[:, k] + self.LR[k] * outer
                gate = mk > 0.01
                spread = torch.clamp((10 * mk).to(torch.int64), 1, 3)       # trunc, D7
                val = tk[:, :nS] * (0.5 + mk).unsqueeze(1)                  # [B,nS]
                sel = self.cubes[spread][:, :nS] & gate.reshape(B, 1, 1, 1, 1)
                U_h[:, 16 * k:16 * k + nS] = torch.where(sel, val.reshape(B, nS, 1, 1, 1),
                                                         zero)

        # ---- 3. prediction-error field and resource allocation (section 4.4)
        if n >= 1:
            e = self.last_err
            Ef = torch.zeros(B, R, R, R, device=dev)
            for i in range(16):
                js = self.site_sensors[i]
                if not js:
                    continue
                avg = e[:, js].mean(1).reshape(B, 1, 1, 1)
                pos = avg > 0.1
                plus = torch.where(self.cubes[1, i] & pos, torch.clamp(2 * avg, max=1.0), zero)
                minus = torch.where(self.cubes[2, i] & ~pos, 0.1 * (1 - avg), zero)
                Ef = Ef + plus - minus
            Ef = Ef + (0.05 * e.abs().mean(1)).reshape(B, 1, 1, 1)
            self.Ef = Ef
            self.has_ef = True
            self.boost = torch.clamp(1 + 4 * Ef.abs().mean(dim=(1, 2, 3)), max=3.0)

        # ---- 4. imprint (sections 3.4, 4.1)
        s = (0.5 + 0.5 * r) * self.prev_imp * self.prev_amp
        if self.has_ef:
            s = s * self.boost
        else:
            s = s * (0.1 + 0.9 * (1 - self.conf))
        self.last_s = torch.where(torch.tensor(skip, device=dev), zero, s)
        if not all(skip):
            p = unit_rows64(a)
            act = F.abs().mean(1)                                            # [B,R,R,R]
            box = tnf.avg_pool3d(act.unsqueeze(1), 3, stride=1, padding=1,
                                 count_include_pad=False).squeeze(1)
            fp = F[:, 0:8].mean(1)
            for b in range(B):
                if skip[b]:
                    continue
                loc = None
                # 4.4 existing
                cnt = self.map.count[b]
                if cnt > 0:
                    cos = cosine64(p[b].unsqueeze(0), self.map.data[b], dim=1)
                    ml = self.map_loc.data[b]
                    bx = box[b][ml[:, 0], ml[:, 1], ml[:, 2]]
                    cand = self.map.valid(b) & (cos > 0.9) & (bx < 2.0)
                    if bool(cand.any()):
                        j = int(torch.argmax(torch.where(cand, cos, minus_inf)))
                        loc = tuple(int(v) for v in ml[j])
                # 4.5 resonant
                if loc is None:
                    proj = torch.mv(self.P, p[b]).reshape(R, R, R)
                    res = cosine64(proj.unsqueeze(-1), fp[b].unsqueeze(-1), dim=-1)
                    sm = tnf.avg_pool3d(res.reshape(1, 1, R, R, R), 3, stride=1, padding=1,
                                        count_include_pad=True).reshape(R, R, R)
                    if float(sm.max()) > 0.3:
                        loc = self._unravel(int(torch.argmax(sm)), R)
                # 4.6 empty
                if loc is None:
                    q = (1 - self.occ[b]) * (1 - torch.sigmoid(5 * act[b])) + 0.1 * self.eps_loc[b]
                    q = q * (act[b] > 0.01).to(torch.float32)
                    loc = self._unravel(int(torch.argmax(q)), R)
                    self.occ[b][loc] = 1.0
                # 4.8 mapping memory
                self.map.push_one(b, p[b])
                self.map_loc.push_one(b, torch.tensor(loc, dtype=torch.int64, device=dev))
                # 4.9 blob on all 64 channels, clipped
                lx, ly, lz = loc
                x0, x1 = max(0, lx - 2), min(R, lx + 3)
                y0, y1 = max(0, ly - 2), min(R, ly + 3)
                z0, z1 = max(0, lz - 2), min(R, lz + 3)
                k = self.blob[x0 - lx + 2:x1 - lx + 2, y0 - ly + 2:y1 - ly + 2, z0 - lz + 2:z1 - lz + 2]
                F[b, :, x0:x1, y0:y1, z0:z1] += s[b] * k

        # ---- 5. field state, novelty, confidence, modulation (section 3.6)
        X = F[:, 0:48]
        info = X.abs().mean(dim=(1, 2, 3, 4))
        var = X.reshape(B, -1).var(1, unbiased=True)
        self.si = 0.95 * self.si + 0.05 * info * (1 + var)
        xn = F[:, 0:8, 0:8, 0:8, 0:8].permute(0, 2, 3, 4, 1).reshape(B, 4096)
        v = xn[:, self.nov_idx]
        v = unit_rows64(v)
        if self.nov.count[0] == 0:
            nov_val = torch.ones(B, device=dev)
        else:
            dots = torch.matmul(self.nov.data, v.unsqueeze(2)).squeeze(2)          # [B,200]
            age = (n - self.nov_ts.data)                                             # float32
            sims = dots * torch.exp(-age / 500)
            ok = torch.stack([self.nov.valid(b) for b in range(B)]) & (age < 1000)
            best = torch.clamp(torch.where(ok, sims, minus_inf).amax(1), min=0.0)
            nov_val = torch.clamp(1 - best + 0.1 * math.sin(0.01 * n), min=0.0)
        self.nov.push(v)
        self.nov_ts.push(torch.full((B,), float(n), device=dev))
        err_s = self.last_err.abs().mean(1) if n >= 1 else torch.full((B,), 0.3, device=dev)
        self.perr.push(err_s)
        c = self.perr.count[0]
        if c > 5:
            recent = self.perr.mean_last(10)
            if c > 20:
                self.pimp.push(self.perr.mean_ages(10, 20) - recent)
                if self.pimp.count[0] > 10:
                    flat = self.pimp.mean_last(10).abs() < 0.001
                    self.plateau = torch.where(flat, self.plateau + 1, zero)
        else:
            recent = torch.full((B,), 0.5, device=dev)
        self.sc = 0.9 * self.sc + 0.1 / (1 + 5 * recent)
        for b in range(B):
            self.cwi[b] = self.cwi[b] + 1 if not has_input[b] else 0
        dreaming = torch.tensor([cw > 100 for cw in self.cwi], device=dev)
        nI = torch.clamp(self.si / 1.5, 0.0, 1.0)
        drive = torch.where(dreaming, torch.full((), 0.95, device=dev), (nI + self.sc) / 2)
        explore = torch.clamp((1 - nI) * (0.5 + 0.5 * nov_val) + torch.clamp(self.plateau / 200, max=0.5) + 0.3,
                              max=1.0)
        explore = torch.clamp(explore + 0.2 * (1 - self.sc), max=1.0)
        amp = 1 + 0.5 * (1 - self.sc)
        imp = 0.1 + 0.7 * (1 - drive)
        decay = 0.999 - 0.01 * nI
        self.prev_imp, self.prev_amp = imp, amp
        self.mod = dict(novelty=nov_val, explore=explore, drive=drive, imp=imp, amp=amp, decay=decay)

        # ---- 6. reward attractors (section 3.7)
        for b in range(B):
            if abs(r_host[b]) > 0.1:
                slot = self.att_count[b] % self.A
                self.att[b, slot] = F[b]
                self.att_strength[b][slot] = abs(r_host[b])
                self.att_valence[b][slot] = 1.0 if r_host[b] > 0 else -1.0
                self.att_age[b][slot] = 0
                self.att_valid[b][slot] = True
                self.att_count[b] += 1

        # ---- 7. the field step (sections 3.9, 3.9.1)
        wave = self._wave(n)
        scalars = torch.zeros(B, 8, device=dev)
        scalars[:, 0] = decay
        scalars[:, 1] = drive
        scalars[:, 2] = explore
        scalars[:, 3] = self.sigma
        scalars[:, 4] = 1.0 if self.has_ef else 0.0
        self._fs_in = (F, self.eps_sp, wave, self.Ef, scalars)     # for --dump-field-step
        F = field_step(F, self.eps_sp, wave, self.Ef, scalars)
        self._fs_out = F
        # 7.6 sigma (after the step used the old value)
        sbase = 0.01 + 0.09 * math.log10(1 + n / 1000)
        if self.has_ef:
            self.sigma = torch.clamp(self.boost * sbase, max=0.3)
        else:
            self.sigma = torch.full((B,), min(0.3, sbase), device=dev)
        # 7.9 attractors, all from the same F (D6)
        rows = []
        for b in range(B):
            tot = None
            for j in range(self.A):
                if not self.att_valid[b][j]:
                    continue
                self.att_age[b][j] += 1
                st = self.att_strength[b][j] * 0.95 ** self.att_age[b][j]
                if st < 0.001:
                    self.att_valid[b][j] = False
                    continue
                Pj = self.att[b, j]
                cosv = cosine64(F[b].reshape(-1), Pj.reshape(-1), dim=0)
                val = self.att_valence[b][j]
                gate = (1 + cosv) / 2 if val > 0 else (1 - cosv) / 2
                inf = (Pj - F[b]) * (st * val * 0.01) * gate
                tot = inf if tot is None else tot + inf
            rows.append(F[b] + tot if tot is not None else F[b])
        F = torch.stack(rows)
        # 7.10 pending hierarchical update
        F = F + U_h
        self.F = F

        # ---- 8. spatial pooling
        aF = F.abs()
        cells = tnf.adaptive_avg_pool3d(aF, 4)                                   # [B,64,4,4,4]
        cm = cells.mean(1).reshape(B, 64)
        thr = torch.clamp(0.8 * aF.mean(dim=(1, 2, 3, 4)), min=0.01)
        active = cm > thr.unsqueeze(1)
        self.n_active = active.sum(1).to(torch.float32)
        tm = tnf.adaptive_avg_pool3d(F[:, 32:48], 4).reshape(B, 16, 64)

        # ---- 9. next-input prediction (sections 3.11, 4.3)
        self.recent.push(a)
        for k in range(4):
            enc = F[:, 16 * k:16 * k + 16].mean(dim=(2, 3, 4))
            self.hpred[:, k] = torch.tanh(torch.matmul(enc.unsqueeze(1), self.W[:, k]).squeeze(1))
        cf = []
        for k in range(4):
            ring = self.herr[k]
            cnt = ring.count[0]
            if cnt < 5:
                cf.append(torch.full((B,), 0.5, device=dev))
                continue
            mu1 = ring.mean_last(10)
            cfk = 1 - torch.clamp(2 * mu1, max=1.0)
            if cnt > 20:
                mu2 = ring.mean_ages(10, 20)
                cfk = torch.where(mu1 < mu2, torch.clamp(1.1 * cfk, max=1.0), cfk)
            cf.append(cfk)
        al = [cf[0], 0.5 * cf[1], 0.25 * cf[2], 0.125 * cf[3]]
        sa = ((al[0] + al[1]) + al[2]) + al[3]
        num = al[0].unsqueeze(1) * self.hpred[:, 0]
        for k in range(1, 4):
            num = num + al[k].unsqueeze(1) * self.hpred[:, k]
        comb = torch.where((sa < 0.01).unsqueeze(1), self.hpred[:, 0], num / sa.unsqueeze(1))
        pred = 0.4 * comb
        pc = (0.3 * torch.stack(cf, 1).amax(1)).unsqueeze(1).expand(B, S).clone()
        rc = self.recent.count[0]
        if rc >= 2:
            mom = torch.zeros(B, S, device=dev)
            for b in range(B):
                if rc >= 3:
                    v3, v2, v1 = self.recent.last(b, 0), self.recent.last(b, 1), self.recent.last(b, 2)
                    mom[b] = v3 + 0.5 * (v3 - v2) + 0.3 * (v2 - v1)
                else:
                    v2, v1 = self.recent.last(b, 0), self.recent.last(b, 1)
                    mom[b] = v2 + (v2 - v1)
            pred = pred + 0.3 * mom
            pc = pc + 0.2
        actj = active[:, self.sensor_cell].to(torch.float32)                 # [B,S]
        tmj = tm[:, self.sensor_tch, self.sensor_cell]                       # [B,S]
        pred = pred + 0.3 * actj * tmj
        pc = torch.maximum(pc, 0.3 * actj)
        pred = pred + (0.1 * F[:, 0:32].abs().mean(dim=(1, 2, 3, 4))).unsqueeze(1)
        pred = torch.clamp(pred, -1.0, 1.0)
        pc = torch.clamp(pc, 0.0, 1.0)
        pc = torch.where(pc < 0.01, torch.full((), 0.1, device=dev), pc)
        self.pred, self.pc = pred, pc

        # ---- 10. motors (section 3.12)
        Xc = F[:, 0:32]
        gx = Xc[:, :, R - 1].mean(dim=(1, 2, 3)) - Xc[:, :, 0].mean(dim=(1, 2, 3))
        gy = Xc[:, :, :, R - 1].mean(dim=(1, 2, 3)) - Xc[:, :, :, 0].mean(dim=(1, 2, 3))
        gz = Xc[:, :, :, :, R - 1].mean(dim=(1, 2, 3)) - Xc[:, :, :, :, 0].mean(dim=(1, 2, 3))
        t = torch.zeros(B, M, device=dev)
        if M >= 2:
            t[:, 0] = 5 * gx
            t[:, 1] = 5 * gy
        if M >= 4:
            t[:, 3] = 0.5 * gz
        if M > 4:
            t[:, 4:] = 0.1 * self.eps_m
        t = t + self.eps_x * explore.unsqueeze(1) * 0.3
        motor = torch.tanh(t)

        # ---- 11. motor echo (section 3.14)
        F[:, 62] *= 0.95
        F[:, 63] *= 0.95
        if M >= 2:
            pat = (motor[:, 0].reshape(B, 1, 1, 1) * self.lin.reshape(1, 1, 1, R)
                   + motor[:, 1].reshape(B, 1, 1, 1) * self.lin.reshape(1, 1, R, 1))
            F[:, 62] += 0.3 * pat
        F[:, 63] += (0.2 * motor.abs().mean(1)).reshape(B, 1, 1, 1)

        # ---- 12. finish
        self.cycle += 1
        self.motor = motor
        self.cycle_time_ms = (time.perf_counter() - t0) * 1000.0
        return motor

    # -------------------------------------------------------------------- accessors
    def field(self):
        return self.F

    def prediction(self):
        return self.pred

    def confidence(self):
        return self.conf

    def telemetry(self, b=0):
        F = self.F[b]
        return {
            "cycle": self.cycle,
            "field_information": float(F.abs().mean()),
            "max_activation": float(F.abs().max()),
            "prediction_confidence": float(self.conf[b]),
            "novelty": float(self.mod["novelty"][b]),
            "exploration_drive": float(self.mod["explore"][b]),
            "internal_drive": float(self.mod["drive"][b]),
            "imprint_strength": float(self.mod["imp"][b]),
            "decay_rate": float(self.mod["decay"][b]),
            "smoothed_information": float(self.si[b]),
            "smoothed_confidence": float(self.sc[b]),
            "self_modification_strength": float(self.sigma[b]),
            "attractors": int(sum(self.att_valid[b])),
            "active_cells": int(self.n_active[b]),
            "cycle_time_ms": self.cycle_time_ms,
        }


# ----------------------------------------------------------------------------- inputs
KINDS = ("smooth", "random", "zeros", "reward", "negative")


def make_inputs(kind, N, keys, S, seed):
    """sensors [N,B,S], reward [N,B] float32 (D15)."""
    B = len(keys)
    sensors = np.zeros((N, B, S), dtype=np.float32)
    reward = np.zeros((N, B), dtype=np.float32)
    t = np.arange(N, dtype=np.float64)
    for b, key in enumerate(keys):
        kb = KINDS[b % len(KINDS)] if kind == "mixed" else kind
        if kb in ("smooth", "reward"):
            for j in range(S):
                freq = 0.03 + 0.011 * (j % 7) + 0.004 * (key % 5)
                phase = 0.7 * j + 1.9 * key + 0.3
                sensors[:, b, j] = 0.8 * np.sin(freq * t + phase)
        elif kb == "random":
            rs = np.random.RandomState([seed & 0xFFFFFFFF, key & 0xFFFFFFFF])
            sensors[:, b, :] = rs.uniform(-1.0, 1.0, size=(N, S))
        elif kb == "zeros":
            pass
        elif kb == "negative":
            # all sensors negative: the resonant match fails against the initially positive
            # content, so the empty-location strategy (eps_loc argmax, occupancy) runs
            rs = np.random.RandomState([seed & 0xFFFFFFFF, key & 0xFFFFFFFF, 1])
            sensors[:, b, :] = rs.uniform(-1.0, -0.05, size=(N, S))
        else:
            raise ValueError("unknown input kind %r" % kb)
        if kb == "reward":
            # a small sub-threshold reward every cycle (changes the imprint intensity only),
            # a strong one (|r| > 0.1, alternating sign) every 20th cycle from cycle 3 + key
            reward[:, b] = 0.05 * np.sin(0.1 * t + key)
            for i in range(N):
                if (i - 3 - key) % 20 == 0 and i >= 3:
                    sign = 1.0 if ((i - 3 - key) // 20) % 2 == 0 else -1.0
                    reward[i, b] = sign * (0.4 + 0.5 * abs(math.sin(0.7 * i + key)))
    return sensors, reward


# ----------------------------------------------------------------------------- CLI
def write_f32(path, arr):
    np.ascontiguousarray(arr, dtype="<f4").tofile(path)


def cmd_fixture(args):
    torch.set_num_threads(args.threads)
    # --keys names the robots; --B (if given) takes the first B of them; default B = len(keys)
    keys = [int(k) for k in args.keys.split(",")] if args.keys else list(range(args.B or 1))
    if args.B is not None:
        if args.B > len(keys):
            raise SystemExit("--B %d needs at least %d --keys, got %d" % (args.B, args.B, len(keys)))
        if args.B < len(keys):
            print("note: --B %d: using the first %d of --keys %s" % (args.B, args.B, keys), file=sys.stderr)
        keys = keys[:args.B]
    N, B, R, S, M = args.cycles, len(keys), args.R, args.S, args.M
    if args.field_every < 1:
        raise SystemExit("--field-every must be >= 1")
    os.makedirs(args.out, exist_ok=True)
    for name in os.listdir(args.out):          # no stale files from an earlier fixture
        if name == "manifest.json" or name.endswith(".f32"):
            os.remove(os.path.join(args.out, name))
    sensors, reward = make_inputs(args.input, N, keys, S, args.seed)
    brain = FieldBrainRef(R=R, S=S, M=M, A=args.A, seed=args.seed, keys=keys)
    write_f32(os.path.join(args.out, "init_field.f32"), brain.F.numpy())
    nf = N // args.field_every
    motors = np.zeros((N, B, M), np.float32)
    preds = np.zeros((N, B, S), np.float32)
    confs = np.zeros((N, B), np.float32)
    stats = np.zeros((N, B, C, 3), np.float32)
    fields_path = os.path.join(args.out, "fields.f32")
    fs_cycle = args.field_step_cycle if args.field_step_cycle >= 0 else N // 2
    t0 = time.time()
    with open(fields_path, "wb") as ff:
        for i in range(N):
            mo = brain.step(torch.from_numpy(sensors[i]), torch.from_numpy(reward[i]))
            motors[i] = mo.numpy()
            preds[i] = brain.pred.numpy()
            confs[i] = brain.conf.numpy()
            Fd = brain.F.double()
            stats[i, :, :, 0] = Fd.sum(dim=(2, 3, 4)).numpy()
            stats[i, :, :, 1] = Fd.abs().sum(dim=(2, 3, 4)).numpy()
            stats[i, :, :, 2] = Fd.abs().amax(dim=(2, 3, 4)).numpy()
            if (i + 1) % args.field_every == 0 and (i + 1) // args.field_every <= nf:
                ff.write(np.ascontiguousarray(brain.F.numpy(), dtype="<f4").tobytes())
            if args.dump_field_step and i == fs_cycle:
                fin, noise, wave, ef, scal = brain._fs_in
                write_f32(os.path.join(args.out, "field_step_in_field.f32"), fin.numpy())
                write_f32(os.path.join(args.out, "field_step_in_noise.f32"), noise.numpy())
                write_f32(os.path.join(args.out, "field_step_in_wave.f32"), wave.numpy())
                write_f32(os.path.join(args.out, "field_step_in_ef.f32"), ef.numpy())
                write_f32(os.path.join(args.out, "field_step_in_scalars.f32"), scal.numpy())
                write_f32(os.path.join(args.out, "field_step_out.f32"), brain._fs_out.numpy())
    elapsed = time.time() - t0
    write_f32(os.path.join(args.out, "sensors.f32"), sensors)
    write_f32(os.path.join(args.out, "reward.f32"), reward)
    write_f32(os.path.join(args.out, "motors.f32"), motors)
    write_f32(os.path.join(args.out, "pred.f32"), preds)
    write_f32(os.path.join(args.out, "conf.f32"), confs)
    write_f32(os.path.join(args.out, "field_stats.f32"), stats)
    files = {
        "sensors.f32": [N, B, S], "reward.f32": [N, B], "motors.f32": [N, B, M],
        "pred.f32": [N, B, S], "conf.f32": [N, B], "field_stats.f32": [N, B, C, 3],
        "fields.f32": [nf, B, C, R, R, R], "init_field.f32": [B, C, R, R, R],
    }
    if args.dump_field_step:
        files.update({"field_step_in_field.f32": [B, C, R, R, R], "field_step_in_noise.f32": [B, 48, R, R, R],
                      "field_step_in_wave.f32": [B, R, R, R], "field_step_in_ef.f32": [B, R, R, R],
                      "field_step_in_scalars.f32": [B, 8], "field_step_out.f32": [B, C, R, R, R]})
    manifest = {
        "R": R, "S": S, "M": M, "B": B, "A": args.A, "seed": args.seed, "keys": keys,
        "cycles": N, "field_every": args.field_every, "input": args.input,
        "field_cycles": [(j + 1) * args.field_every - 1 for j in range(nf)],
        "field_step_cycle": fs_cycle if args.dump_field_step else None,
        "dtype": "float32", "byteorder": "little", "order": "C", "files": files,
        "field_stats": "per channel: sum, sum|.|, max|.| of F at the end of each cycle (float64, stored float32)",
        "generator": "scripts/reference/fieldbrain_ref.py", "torch": torch.__version__,
        "threads": args.threads, "seconds": round(elapsed, 3),
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    if not args.quiet:
        print(json.dumps({"out": args.out, "cycles": N, "seconds": round(elapsed, 3)}))


def cmd_time(args):
    """ms per reference cycle on --device; one JSON line (with "skipped": reason when the
    device is not there)."""
    row = {"impl": "python", "device": args.device, "R": args.R, "B": args.B, "S": args.S,
           "M": args.M, "cycles": args.cycles, "threads": args.threads}
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print(json.dumps(dict(row, skipped="no CUDA device visible to this torch")))
        return
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    torch.set_num_threads(args.threads)
    keys = list(range(args.B))
    N = args.warmup + args.cycles
    sensors, reward = make_inputs("smooth", N, keys, args.S, args.seed)
    brain = FieldBrainRef(R=args.R, S=args.S, M=args.M, A=args.A, seed=args.seed, keys=keys,
                          device=device)
    for i in range(args.warmup):
        brain.step(torch.from_numpy(sensors[i]), torch.from_numpy(reward[i]))
    sync()
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(args.warmup, N):
        brain.step(torch.from_numpy(sensors[i]), torch.from_numpy(reward[i]))
    sync()
    ms = (time.perf_counter() - t0) * 1000.0 / max(1, args.cycles)
    cpu_ms = (time.process_time() - c0) * 1000.0 / max(1, args.cycles)   # robust to a busy machine
    print(json.dumps(dict(row, ms_per_cycle=round(ms, 3), cpu_ms_per_cycle=round(cpu_ms, 3))))


def field_step_inputs(B, R, seed, device):
    """Random field-step inputs in the ranges of the brain (like brain/ops/field_step_inputs.h)."""
    g = torch.Generator().manual_seed(seed)
    field = torch.randn(B, 64, R, R, R, generator=g) * 0.2 + 0.05
    field[:, 48:52] = torch.randn(B, 4, R, R, R, generator=g) * 0.1 + 2.0
    noise = torch.randn(B, 48, R, R, R, generator=g)
    wave = torch.randn(B, R, R, R, generator=g) * 0.1
    ef = torch.randn(B, R, R, R, generator=g) * 0.05
    scalars = torch.zeros(B, 8)
    scalars[:, 0], scalars[:, 1], scalars[:, 2], scalars[:, 3], scalars[:, 4] = 0.99, 0.5, 0.3, 0.1, 1.0
    return [t.to(device) for t in (field, noise, wave, ef, scalars)]


def cmd_time_step(args):
    """ms per field_step on --device, eager or through torch.compile; one JSON line. A row that
    cannot run here (no such device, no torch.compile) is printed with "skipped": reason."""
    row = {"impl": "python_eager" if args.mode == "eager" else "torch_compile", "device": args.device,
           "R": args.R, "B": args.B, "torch": torch.__version__}
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print(json.dumps(dict(row, skipped="no CUDA device visible to this torch")))
        return
    step = field_step
    inputs = field_step_inputs(args.B, args.R, args.seed, device)
    if args.mode == "compile":
        if not hasattr(torch, "compile"):
            print(json.dumps(dict(row, skipped=f"torch.compile needs PyTorch >= 2.0 (this is {torch.__version__})")))
            return
        # The stencil kernels are cached on first use: make them here, eagerly, so that they
        # are not outputs of a compiled region (CUDA-graph replays would overwrite them).
        _kernels(inputs[0].dtype, inputs[0].device)
        compiled = torch.compile(field_step, mode=args.compile_mode)
        mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)

        def step(*xs):
            # max-autotune replays CUDA graphs (cudagraph trees): each call is one step, whose
            # outputs the next call's replay may overwrite; say so, as a training loop would.
            if mark is not None and device.type == "cuda":
                mark()
            return compiled(*xs)
    torch.set_num_threads(args.threads)
    try:
        with torch.no_grad():
            for _ in range(args.warmup):
                step(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(args.steps):
                    step(*inputs)
                end.record()
                end.synchronize()
                ms = start.elapsed_time(end) / args.steps
            else:
                t0 = time.perf_counter()
                for _ in range(args.steps):
                    step(*inputs)
                ms = (time.perf_counter() - t0) * 1000.0 / args.steps
    except Exception as e:  # e.g. Inductor without a C compiler: report, do not fail the bench
        print(json.dumps(dict(row, skipped=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")))
        return
    print(json.dumps(dict(row, steps=args.steps, ms_per_step=round(ms, 4))))


def load_recording(folder):
    """A session recorded by fieldbrain-server --record (docs/replay.md): (meta, sensors [N,S],
    reward [N], motors [N,M]), float32."""
    with open(os.path.join(folder, "session.json")) as f:
        meta = json.load(f)
    arrays = [np.load(os.path.join(folder, n + ".npy")) for n in ("sensors", "reward", "motors")]
    n = min(len(a) for a in arrays)  # a recording cut by a crash may differ by one row
    return (meta,) + tuple(np.ascontiguousarray(a[:n], dtype=np.float32) for a in arrays)


def cmd_replay(args):
    """Runs a recorded session through a fresh reference brain with the robot's key and the
    recorded brain config; prints the worst max|motor diff| against the recording."""
    torch.set_num_threads(args.threads)
    meta, sensors, reward, recorded = load_recording(args.folder)
    if int(meta.get("start_cycle", 0)) != 0:
        raise SystemExit("the recording starts at brain cycle %d (the robot resumed a saved brain): "
                         "a fresh brain cannot replay it" % meta["start_cycle"])
    cfg = meta["brain"]
    S, M = int(meta["sensory_dim"]), int(meta["motor_dim"])
    brain = FieldBrainRef(R=int(cfg.get("resolution", 32)), S=S, M=M,
                          A=int(cfg.get("attractor_capacity", 8)), seed=int(cfg.get("seed", 42)),
                          keys=[int(meta["key_hash"])])
    N = len(sensors)
    motors = np.zeros((N, M), np.float32)
    worst, worst_cycle = 0.0, -1
    for i in range(N):
        motors[i] = brain.step(torch.from_numpy(sensors[i:i + 1]), torch.from_numpy(reward[i:i + 1]))[0].numpy()
        d = float(np.abs(motors[i] - recorded[i]).max()) if M else 0.0
        if args.per_cycle:
            print("cycle %d max|motor diff| %.3g" % (i, d))
        if d > worst or worst_cycle < 0:
            worst, worst_cycle = d, i
    if args.out:
        np.save(args.out, motors)
    print(json.dumps({"impl": "python", "robot_key": meta.get("robot_key"), "cycles": N,
                      "worst_vs_recording": worst, "worst_cycle": worst_cycle}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, R, cycles, B):
        p.add_argument("--R", type=int, default=R)
        p.add_argument("--B", type=int, default=B)
        p.add_argument("--S", type=int, default=24)
        p.add_argument("--M", type=int, default=4)
        p.add_argument("--A", type=int, default=8)
        p.add_argument("--seed", type=int, default=42)
        p.add_argument("--cycles", type=int, default=cycles)
        p.add_argument("--threads", type=int, default=1)

    pf = sub.add_parser("fixture", help="write a parity fixture directory")
    common(pf, 16, 200, None)
    pf.add_argument("--out", required=True)
    pf.add_argument("--keys", default=None, help="comma-separated robot keys (default 0..B-1)")
    pf.add_argument("--input", default="smooth", choices=KINDS + ("mixed",),
                    help="mixed: kind by batch index (smooth, random, zeros, reward, negative)")
    pf.add_argument("--field-every", type=int, default=10)
    pf.add_argument("--dump-field-step", action="store_true",
                    help="also write one field_step input/output example")
    pf.add_argument("--field-step-cycle", type=int, default=-1,
                    help="cycle whose field step is dumped (default cycles//2)")
    pf.add_argument("--quiet", action="store_true")
    pt = sub.add_parser("time", help="print ms per cycle as one JSON line")
    common(pt, 32, 20, 1)
    pt.add_argument("--warmup", type=int, default=2)
    pt.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ps = sub.add_parser("time-step", help="print ms per field_step on a device as one JSON line")
    ps.add_argument("--R", type=int, default=32)
    ps.add_argument("--B", type=int, default=1)
    ps.add_argument("--seed", type=int, default=42)
    ps.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ps.add_argument("--mode", default="eager", choices=("eager", "compile"))
    ps.add_argument("--compile-mode", default="max-autotune", help="torch.compile mode")
    ps.add_argument("--steps", type=int, default=20)
    ps.add_argument("--warmup", type=int, default=3)
    ps.add_argument("--threads", type=int, default=1)
    pr = sub.add_parser("replay", help="replay a session recorded by fieldbrain-server --record")
    pr.add_argument("folder")
    pr.add_argument("--out", default=None, help="write the reference's motors [N,M] to this .npy")
    pr.add_argument("--per-cycle", action="store_true")
    pr.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    if args.cmd == "fixture":
        cmd_fixture(args)
    elif args.cmd == "time-step":
        cmd_time_step(args)
    elif args.cmd == "replay":
        cmd_replay(args)
    else:
        cmd_time(args)

if __name__ == "__main__":
    main()
