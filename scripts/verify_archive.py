#!/usr/bin/python3
"""Opens a fieldbrain archive with torch.load(path, weights_only=True) and verifies its SHA-256
the way brain/persistence.cpp computes it. Archives of version 2 (plain dicts) open with
weights_only=True; version 1 files (type-tagged dicts) need weights_only=False, which is only
tried for them. Usage: /usr/bin/python3 scripts/verify_archive.py FILE...
Exit status 0 when every file verifies, 1 otherwise (the reason is printed)."""
import hashlib
import struct
import sys

import torch

# c10::toString(ScalarType) names, as hashed by the C++ side.
DTYPE_NAMES = {
    torch.float32: "Float", torch.float64: "Double", torch.float16: "Half",
    torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char",
    torch.uint8: "Byte", torch.bool: "Bool",
}


def digest(tensors, meta_dump, version):
    sha = hashlib.sha256()
    put = lambda s: sha.update(s.encode() + b"\0")
    put(f"fieldbrain-archive-v{version}")
    put(meta_dump)
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        put(name)
        put(DTYPE_NAMES[t.dtype])
        sha.update(struct.pack("<q", t.dim()))
        for d in t.shape:
            sha.update(struct.pack("<q", d))
        sha.update(t.numpy().tobytes() if t.dtype != torch.bool else t.to(torch.uint8).numpy().tobytes())
    return sha.hexdigest()


def load(path):
    """The archive dict; version 1 files are the only ones opened without weights_only."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        if "restore_type_tag" not in str(e):
            raise
        archive = torch.load(path, map_location="cpu", weights_only=False)
        if archive.get("version") != 1:
            raise
        return archive


def verify(path):
    archive = load(path)
    if not isinstance(archive, dict) or archive.get("format") != "fieldbrain-archive":
        return "not a fieldbrain archive"
    if archive.get("version") not in (1, 2):
        return f"unsupported archive version {archive.get('version')}"
    actual = digest(archive["tensors"], archive["meta"], archive["version"])
    if actual != archive["sha256"]:
        return f"checksum mismatch (stored {archive['sha256'][:16]}..., computed {actual[:16]}...)"
    return None


if __name__ == "__main__":
    bad = 0
    for path in sys.argv[1:]:
        try:
            problem = verify(path)
        except Exception as e:  # a truncated zip, a missing file: report, keep going
            problem = f"unreadable: {e}"
        print(f"{path}: {'OK' if problem is None else problem}")
        bad += problem is not None
    sys.exit(1 if bad else 0)
