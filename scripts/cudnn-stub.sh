#!/usr/bin/env bash
# Link-time stubs for the shared libraries a CUDA LibTorch needs but this system lacks: Debian
# 13's libtorch_cuda.so (and libtorch_python.so) need cuDNN 9 (libcudnn.so.9), which Debian does
# not ship. For each missing library this reads which version nodes the LibTorch libraries
# need from it (readelf -V) and which symbols they import under them (objdump -T), and builds a
# library with that soname exporting exactly those symbols under those versions (gcc -shared and
# a version script). Every function traps: the stub lets a CUDA build link, and run without a
# GPU, and nothing more. scripts/test-stacks.sh uses it for the CUDA compile-and-link check;
# never install it.
#
#   scripts/cudnn-stub.sh OUT_DIR [LIBRARY...]
#       LIBRARY: default libtorch_cuda.so and libtorch_python.so, as ldconfig finds them
#
# Then link with -L OUT_DIR -Wl,-rpath-link,OUT_DIR and run with LD_LIBRARY_PATH=OUT_DIR.
set -euo pipefail
out=${1:?usage: cudnn-stub.sh OUT_DIR [LIBRARY...]}
shift
libs=("$@")
if [ ${#libs[@]} -eq 0 ]; then
  for name in libtorch_cuda.so libtorch_python.so; do
    path=$(ldconfig -p | awk -v n="$name" '$1 == n { print $NF; exit }')
    [ -n "$path" ] && libs+=("$path")
  done
fi
[ ${#libs[@]} -gt 0 ] || { echo "cudnn-stub: no libtorch_cuda.so (is libtorch-cuda-dev installed?)" >&2; exit 1; }
mkdir -p "$out"

# (Made afresh every time: an earlier stub in OUT_DIR is not looked at.)
missing=$(for lib in "${libs[@]}"; do ldd "$lib"; done |
          awk '$2 == "=>" && $3 == "not" { print $1 }' | sort -u)
if [ -z "$missing" ]; then
  echo "cudnn-stub: ${libs[*]} find every library they need (a real cuDNN?); no stub made"
  exit 0
fi

# The version nodes LIB needs from the file SONAME. readelf -V, section .gnu.version_r:
# "000000: Version: 1  File: libcudnn.so.9  Cnt: 1", then one
# "0x0010:   Name: libcudnn.so.9  Flags: none  Version: 25" line per node.
versions_of() {  # versions_of LIB SONAME
  readelf -V "$1" | awk -v file="$2" '
    /section/ { current = 0 }
    /File:/ { for (i = 1; i < NF; i++) if ($i == "File:") current = ($(i + 1) == file) }
    current && /Name:/ { for (i = 1; i < NF; i++) if ($i == "Name:") print $(i + 1) }'
}
# "TYPE NAME" of every symbol LIB imports under VERSION. objdump -T:
# ADDRESS FLAGS... TYPE *UND* SIZE (VERSION) NAME, TYPE DF (function) or DO (object).
imports_of() {  # imports_of LIB VERSION
  objdump -T "$1" | awk -v version="($2)" '{
    for (i = 2; i <= NF; i++) if ($i == "*UND*") break
    if (i < NF && $(i + 2) == version) print $(i - 1), $NF
  }'
}

for soname in $missing; do
  versions=$(for lib in "${libs[@]}"; do versions_of "$lib" "$soname"; done | sort -u)
  if [ -z "$versions" ]; then
    echo "cudnn-stub: no versioned import from $soname: cannot tell its symbols apart" >&2
    exit 1
  fi
  stem=$out/${soname%%.so*}
  : >"$stem.c"
  : >"$stem.map"
  functions=0
  objects=0
  for version in $versions; do
    printf '%s {\n  global:\n' "$version" >>"$stem.map"
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
    done < <(for lib in "${libs[@]}"; do imports_of "$lib" "$version"; done | sort -u -k2,2)
    printf '  local: *;\n};\n' >>"$stem.map"
  done
  gcc -shared -fPIC -O0 -o "$out/$soname" -Wl,-soname,"$soname" \
      -Wl,--version-script="$stem.map" "$stem.c"
  echo "cudnn-stub: $out/$soname: $functions functions, $objects objects, version node(s)" \
       "$(echo $versions), for $(for lib in "${libs[@]}"; do basename "$lib"; done | paste -sd' ')"
done
still=$(for lib in "${libs[@]}"; do LD_LIBRARY_PATH="$out" ldd -r "$lib" 2>&1; done |
        grep -E "not found|undefined symbol: cudnn" || true)
if [ -n "$still" ]; then
  echo "cudnn-stub: still unresolved: $still" >&2
  exit 1
fi
