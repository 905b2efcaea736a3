#!/bin/sh
# Regenerate the committed legacy fixtures (test/fixtures/legacy/) from an em-brain checkout at
# commit ef2bdb8: EM_BRAIN=/path/to/em-brain scripts/legacy/make_fixtures.sh [scenario ...]
# Takes ~60 min on a busy 2-core machine (r32_s24m4_smooth_reward and the three *_sync
# scenarios, whose planner discoveries take 60-90 s each in the original, are most of it).
#
# The original's numbers depend on the torch release it runs under, and the legacy profile
# follows the LibTorch release it runs on, so the scenarios are recorded once per release: the
# main set under torch 1.13 (Debian 12's python3-torch), another release's set into
# FIXTURES=test/fixtures/legacy/torch-<major>.<minor> with that release's Python (PY=...; on
# Debian 13 /usr/bin/python3 has torch 2.6). Only the main set gets numpy_random and
# torch_draws, which do not depend on the release.
set -eu
cd "$(dirname "$0")/../.."
: "${EM_BRAIN:?set EM_BRAIN to the em-brain checkout}"
COMMIT=${EM_BRAIN_COMMIT:-ef2bdb8}
PY=${PY:-/usr/bin/python3}
FIXTURES=${FIXTURES:-test/fixtures/legacy}
[ $# -gt 0 ] || set -- r16_s24m4_construction r16_s24m4_smooth r16_s24m4_random_reward \
  r16_s24m4_negative_reward r16_s12m6_smooth_reward r16_s12m6_random r16_s12m6_negative \
  r32_s24m4_smooth_reward r16_s24m4_smooth_sync r16_s12m6_negative_sync \
  r16_s12m6_smooth_reward_sync
for s in "$@"; do
  echo "== $s" >&2
  rm -rf "$FIXTURES/$s"
  $PY scripts/legacy/run_original.py --em-brain "$EM_BRAIN" --out "$FIXTURES/$s" \
      --scenario "$s" --em-brain-commit "$COMMIT"
done
if [ "$FIXTURES" = test/fixtures/legacy ]; then
  $PY scripts/legacy/make_numpy_fixture.py --out test/fixtures/legacy/numpy_random
  $PY scripts/legacy/make_draws_fixture.py --out test/fixtures/legacy/torch_draws
fi
