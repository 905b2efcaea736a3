"""Philox4x32-10 and its normals/uniforms (docs/cycle.md "Randomness") with torch integer ops.

Written from docs/cycle.md, independently of brain/ops/philox.h; the two must give the same
bits. Words are int64 tensors holding values in [0, 2^32). A 32x32-bit product would not fit
a signed int64, so the multiplier is split into 16-bit halves: a*M = a*M_hi*2^16 + a*M_lo,
each partial product < 2^48. The float part uses only float32 +, -, *, / and sqrt, one op
at a time, in the documented order (constants are doubles rounded once to float32).

Streams: per cycle 1 eps_loc, 2 eps_sp, 3 eps_m, 4 eps_x; construction (cycle 0) 16 initial
field, 17 wave count, 18 wave vectors, 19 hierarchy weights.
"""

import math

import torch

STREAM_EMPTY_LOCATION = 1
STREAM_SPONTANEOUS = 2
STREAM_EXTRA_MOTORS = 3
STREAM_EXPLORATION = 4
STREAM_INITIAL_FIELD = 16
STREAM_WAVE_COUNT = 17
STREAM_WAVE_VECTORS = 18
STREAM_HIERARCHY = 19

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = 0xFFFFFFFF

_i64 = torch.int64
_f32 = torch.float32


def _f(x):
    """A double rounded once to a float32 scalar tensor."""
    return torch.tensor(x, dtype=torch.float64).to(_f32)


def _mulhilo(a, m):
    """(hi, lo) 32-bit halves of a * m, a an int64 tensor of words, m a 32-bit int."""
    m_hi, m_lo = m >> 16, m & 0xFFFF
    t = a * m_lo                      # < 2^48
    u = a * m_hi                      # < 2^48; the product is t + u * 2^16
    low = (t & MASK32) + ((u & 0xFFFF) << 16)   # < 2^33
    lo = low & MASK32
    hi = ((t >> 32) + (u >> 16) + (low >> 32)) & MASK32
    return hi, lo


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Ten rounds; the key (k0, k1: int64 tensors or ints) is bumped before rounds 2..10."""
    for r in range(10):
        if r > 0:
            k0 = (k0 + W0) & MASK32
            k1 = (k1 + W1) & MASK32
        hi0, lo0 = _mulhilo(c0, M0)
        hi1, lo1 = _mulhilo(c2, M1)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def uniform_of(x):
    """A word -> (2 (x >> 9) + 1) * 2^-24 in (0, 1), exact in float32."""
    return (((x >> 9) << 1) | 1).to(_f32) * _f(2.0 ** -24)


def _bits(f):
    return f.view(torch.int32).to(_i64) & MASK32


def _float(bits):
    b = bits & MASK32
    b = torch.where(b >= 2 ** 31, b - 2 ** 32, b)
    return b.to(torch.int32).view(_f32)


def box_muller(x0, x1):
    """Two words -> two normals: sqrt(-2 ln u0) (cos, sin)(2 pi u1), docs/cycle.md."""
    # ln u0 = e ln2 + ln f, f in [sqrt(1/2), sqrt 2), ln f = 2 atanh(s) by Horner in s^2.
    ubits = _bits(uniform_of(x0))
    mbits = (ubits & 0x7FFFFF) | 0x3F800000
    high = (mbits > _bits(_f(math.sqrt(2.0)).reshape(1))).to(_i64)
    mbits = mbits - (high << 23)
    e = (ubits >> 23) - 127 + high
    f = _float(mbits)
    one = _f(1.0)
    s = (f - one) / (f + one)
    s2 = s * s
    p = _f(2.0 / 9.0)
    for c in (2.0 / 7.0, 2.0 / 5.0, 2.0 / 3.0, 2.0):
        p = p * s2 + _f(c)
    ln = e.to(_f32) * _f(math.log(2.0)) + s * p
    r = torch.sqrt(ln * _f(-2.0))
    # theta = q pi/2 + pi/4 + phi, q the quadrant, phi = g pi/2 with g in [-1/2, 1/2) exact.
    k = x1 >> 9
    q = k >> 21
    g = (((k << 1) | 1) - (q << 22) - (1 << 21)).to(_f32) * _f(2.0 ** -22)
    phi = g * _f(math.pi / 2)
    p2 = phi * phi
    sp = _f(1.0 / 362880.0)
    for c in (-1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0):
        sp = sp * p2 + _f(c)
    cp = _f(-1.0 / 3628800.0)
    for c in (1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0, -0.5, 1.0):
        cp = cp * p2 + _f(c)
    sin_phi = phi * sp
    half = _f(math.sqrt(0.5))
    ca = (cp - sin_phi) * half
    sa = (cp + sin_phi) * half
    swap = (q & 1) == 1
    c = torch.where(swap, sa, ca)
    sn = torch.where(swap, ca, sa)
    cos_t = torch.where((q == 1) | (q == 2), -c, c)
    sin_t = torch.where(q >= 2, -sn, sn)
    return r * cos_t, r * sin_t


def _key(seed, cycle, n_blocks, stream):
    """Counters (block, stream, cycle lo, cycle hi) and key words of blocks 0..n_blocks-1.

    seed and cycle: int64 tensors [B] (or ints); results broadcast to [B, n_blocks]."""
    seed = torch.as_tensor(seed, dtype=_i64).reshape(-1, 1)
    cycle = torch.as_tensor(cycle, dtype=_i64).reshape(-1, 1)
    blocks = torch.arange(n_blocks, dtype=_i64).reshape(1, -1)
    B = max(seed.shape[0], cycle.shape[0])
    c0 = blocks.expand(B, n_blocks)
    c1 = torch.full((B, n_blocks), stream, dtype=_i64)
    c2 = (cycle & MASK32).expand(B, n_blocks)
    c3 = ((cycle >> 32) & MASK32).expand(B, n_blocks)
    k0 = (seed & MASK32).expand(B, n_blocks)
    k1 = ((seed >> 32) & MASK32).expand(B, n_blocks)
    return c0, c1, c2, c3, k0, k1


def words(seed, cycle, stream, n_blocks):
    """The four words of blocks 0..n_blocks-1: int64 [B, n_blocks] each."""
    return philox4x32_10(*_key(seed, cycle, n_blocks, stream))


def normals(seed, cycle, stream, n):
    """Elements 0..n-1 of a normal stream per robot: float32 [B, n] (seed, cycle: [B] or int)."""
    n_blocks = (n + 3) // 4
    w0, w1, w2, w3 = words(seed, cycle, stream, n_blocks)
    z0, z1 = box_muller(w0, w1)
    z2, z3 = box_muller(w2, w3)
    return torch.stack((z0, z1, z2, z3), dim=2).reshape(z0.shape[0], 4 * n_blocks)[:, :n].contiguous()


def uniforms(seed, cycle, stream, n):
    """Elements 0..n-1 of a uniform stream: element i = uniform_of(word i % 4 of block i / 4)."""
    n_blocks = (n + 3) // 4
    w = words(seed, cycle, stream, n_blocks)
    u = torch.stack([uniform_of(x) for x in w], dim=2)
    return u.reshape(u.shape[0], 4 * n_blocks)[:, :n].contiguous()


def _main():
    """Known-answer check and a dump for the C++ test: `philox_ref.py dump SEED CYCLE STREAM N`
    prints the N normals' float32 bit patterns in hex, one per line."""
    import sys
    if len(sys.argv) >= 2 and sys.argv[1] == "dump":
        seed, cycle, stream, n = (int(v) for v in sys.argv[2:6])
        z = normals(seed, cycle, stream, n)[0]
        bits = z.view(torch.int32).tolist()
        sys.stdout.write("".join("%08x\n" % (b & MASK32) for b in bits))
        return
    if len(sys.argv) >= 2 and sys.argv[1] == "dump-uniform":
        seed, cycle, stream, n = (int(v) for v in sys.argv[2:6])
        u = uniforms(seed, cycle, stream, n)[0]
        bits = u.view(torch.int32).tolist()
        sys.stdout.write("".join("%08x\n" % (b & MASK32) for b in bits))
        return
    raise SystemExit("usage: philox_ref.py dump|dump-uniform SEED CYCLE STREAM N")


if __name__ == "__main__":
    _main()
