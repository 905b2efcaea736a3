"""Independent PyTorch reference for fieldbrain's HRR library (hrr/).

Written from the definitions (docs/hrr.md), not from the C++:
binding uses the *full complex* FFT (torch.fft.fft/ifft) where the C++ uses rfft/irfft, so
agreement also checks the real-FFT path. Run with /usr/bin/python3 (Debian's python3-torch).
"""
import hashlib
import math
import struct

import torch


def _spectrum(v):
    return torch.fft.fft(v, dim=-1)


def _signal(s):
    return torch.fft.ifft(s, dim=-1).real


def bind(a, b):
    return _signal(_spectrum(a) * _spectrum(b))


def involution(a):
    # a_dagger[i] = a[(-i) mod D]
    d = a.shape[-1]
    index = (-torch.arange(d)) % d
    return a[..., index]


def unbind(c, b):
    return bind(c, involution(b))


def exact_inverse(b, relative_epsilon=1e-8):
    spec = _spectrum(b)
    power = spec.abs() ** 2
    tiny = torch.finfo(b.dtype).tiny
    eps = (relative_epsilon * (b * b).sum(-1, keepdim=True)).clamp_min(tiny)
    return _signal(spec.conj() / (power + eps))


def make_unitary(v, positive=False):
    spec = _spectrum(v)
    mag = spec.abs()
    tiny = torch.finfo(v.dtype).tiny
    unit = torch.where(mag <= tiny, torch.ones_like(spec), spec / mag.clamp_min(tiny))
    if positive:
        d = v.shape[-1]
        unit[..., 0] = 1.0
        if d % 2 == 0:
            unit[..., d // 2] = 1.0
    return _signal(unit)


def power(v, exponent):
    spec = _spectrum(v)
    raised = torch.polar(spec.abs() ** exponent, spec.angle() * exponent)
    return _signal(raised)


def permute(v, shifts):
    return torch.roll(v, shifts, dims=-1)


def permute_by(v, permutation):
    return v[..., permutation]


def inverse_permute_by(v, permutation):
    inverse = torch.empty_like(permutation)
    inverse[permutation] = torch.arange(permutation.numel())
    return v[..., inverse]


def bundle(items, weights=None, normalize=False):
    out = items.sum(-2) if weights is None else (items * weights.unsqueeze(-1)).sum(-2)
    if normalize:
        out = out / out.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(out.dtype).tiny)
    return out


def cosine(a, b):
    return torch.nn.functional.cosine_similarity(a, b, dim=-1, eps=1e-30)


def cleanup_topk(queries, keys, k):
    qn = queries / queries.norm(dim=-1, keepdim=True)
    kn = keys / keys.norm(dim=-1, keepdim=True)
    return torch.topk(qn @ kn.T, k, dim=-1)


# --- deterministic vocabulary vectors (scheme "sha256-boxmuller-v1", hrr/random_vectors.h) ---

def _sha256(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.digest()


def named_vector(seed, name, dim, unitary=False, dtype=torch.float32):
    key = _sha256(b"fieldbrain-hrr-vocabulary-v1", struct.pack("<Q", seed), name.encode("utf-8"))
    words = []
    block = 0
    while len(words) < dim + (dim % 2):
        words.extend(struct.unpack("<4Q", _sha256(key, struct.pack("<Q", block))))
        block += 1
    scale = 1.0 / math.sqrt(dim)
    values = []
    for i in range(0, dim, 2):
        u1 = ((words[i] >> 11) + 0.5) * 2.0 ** -53
        u2 = ((words[i + 1] >> 11) + 0.5) * 2.0 ** -53
        radius = math.sqrt(-2.0 * math.log(u1))
        angle = 2.0 * math.pi * u2
        values.append(radius * math.cos(angle) * scale)
        values.append(radius * math.sin(angle) * scale)
    v = torch.tensor(values[:dim], dtype=torch.float64)
    if unitary:
        v = make_unitary(v)
    return v.to(dtype)


# --- integrity digest of saved vocabularies / item memories (hrr/persistence.h) ---

def _canonical(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "%016x" % struct.unpack("<Q", struct.pack("<d", value))[0]
    return str(value)


def file_digest(content):
    """SHA-256 digest of a dict loaded with torch.load from a fieldbrain HRR file."""
    list_key = "names" if "names" in content else "labels"
    h = hashlib.sha256()
    h.update(b"fieldbrain-hrr-digest-v1\n")
    for key in sorted(k for k in content if k not in ("digest", "vectors", list_key)):
        h.update(("%s=%s\n" % (key, _canonical(content[key]))).encode("utf-8"))
    h.update((list_key + "\n").encode("utf-8"))
    for entry in content[list_key]:
        raw = entry.encode("utf-8")
        h.update(struct.pack("<Q", len(raw)))
        h.update(raw)
    vectors = content["vectors"].contiguous()
    h.update(b"vectors\n")
    h.update(struct.pack("<QQ", vectors.shape[0], vectors.shape[1]))
    h.update(vectors.numpy().tobytes())
    return "sha256:" + h.hexdigest()
