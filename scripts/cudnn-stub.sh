#!/usr/bin/env bash
# Link-time stubs for the shared libraries a CUDA LibTorch needs but this system lacks: Debian
# 13's libtorch_cuda.so needs cuDNN 9 (libcudnn.so.9), which Debian does not ship. For each
# such library this reads which version nodes the LibTorch library needs from it (readelf -V)
# and which symbols it imports under them (objdump -T), and builds a library with that soname
# exporting exactly those symbols under those versions (gcc -shared and a version script). Every
# function traps: the stub lets a CUDA build link, and run without a GPU, and nothing more.
# scripts/test-stacks.sh uses it for the CUDA compile-and-link check; never install it.
#
#   scripts/cudnn-stub.sh OUT_DIR [LIBRARY]    (LIBRARY: default libtorch_cuda.so from ldconfig)
#
# Then link with -L OUT_DIR -Wl,-rpath-link,OUT_DIR and run with LD_LIBRARY_PATH=OUT_DIR.
set -euo pipefail
out=${1:?usage: cudnn-stub.sh OUT_DIR [LIBRARY]}
lib=${2:-$(ldconfig -p | awk '$1 == "libtorch_cuda.so" { print $NF; exit }')}
[ -n "$lib" ] && [ -f "$lib" ] || { echo "cudnn-stub: no libtorch_cuda.so (is libtorch-cuda-dev installed?)" >&2; exit 1; }
mkdir -p "$out"

missing=$(LD_LIBRARY_PATH="$out" ldd "$lib" | awk '$2 == "=>" && $3 == "not" { print $1 }' | sort -u)
if [ -z "$missing" ]; then
  echo "cudnn-stub: $lib finds every library it needs; no stub made"
  exit 0
fi
symbols=$(objdump -T "$lib")
for soname in $missing; do
  # readelf -V, section .gnu.version_r: "File: libcudnn.so.9  Cnt: 1" then "Name: libcudnn.so.9 ...".
  versions=$(readelf -V "$lib" | awk -v file="$soname" '
    /File:/ { current = ($4 == file) }
    current && /Name:/ { print $3 }')
  if [ -z "$versions" ]; then
    echo "cudnn-stub: $lib imports no versioned symbol from $soname: cannot tell its symbols apart" >&2
    exit 1
  fi
  stem=$out/${soname%%.so*}
  : >"$stem.c"
  : >"$stem.map"
  functions=0
  objects=0
  for version in $versions; do
    # objdump -T: ADDRESS FLAGS... TYPE *UND* SIZE (VERSION) NAME; TYPE is DF (function) or DO.
    list=$(awk -v version="($version)" '{
        for (i = 2; i <= NF; i++) if ($i == "*UND*") break
        if (i < NF && $(i + 2) == version) print $(i - 1), $NF
      }' <<<"$symbols" | sort -u)
    echo "$version {" >>"$stem.map"
    echo "  global:" >>"$stem.map"
    while read -r type name; do
      [ -n "$name" ] || continue
      if [ "$type" = DO ]; then
        echo "char $name[64];" >>"$stem.c"
        objects=$((objects + 1))
      else
        echo "void $name(void) { __builtin_trap(); }" >>"$stem.c"
        functions=$((functions + 1))
      fi
      echo "    $name;" >>"$stem.map"
    done <<<"$list"
    echo "  local: *;" >>"$stem.map"
    echo "};" >>"$stem.map"
  done
  gcc -shared -fPIC -O0 -o "$out/$soname" -Wl,-soname,"$soname" \
      -Wl,--version-script="$stem.map" "$stem.c"
  echo "cudnn-stub: $out/$soname: $functions functions, $objects objects," \
       "versions $(echo $versions) (for $(basename "$lib"))"
done
still=$(LD_LIBRARY_PATH="$out" ldd "$lib" | awk '$3 == "not" { print $1 }')
if [ -n "$still" ]; then
  echo "cudnn-stub: still missing: $still" >&2
  exit 1
fi
