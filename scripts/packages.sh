# The Debian packages fieldbrain builds and tests with, under names Debian 12 and 13 share.
# Sourced by scripts/setup.sh (this machine) and scripts/test-stacks.sh (its Debian 13 root).
FIELDBRAIN_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev python3-torch python3-numpy
  pybind11-dev python3-dev python3-pytest python3-setuptools python3-wheel  # the Python package (python/)
  nlohmann-json3-dev libboost-dev libboost-system-dev catch2
  libfmt-dev libspdlog-dev libcli11-dev
  libssl-dev libpng-dev libstb-dev
  libsleef-dev python3-matplotlib
  chromium chromium-driver python3-selenium
  clang libclang-rt-dev llvm  # llvm: llvm-symbolizer, which the fuzz smoke runs' leak suppressions need
  systemd curl  # systemd-analyze verifies deploy/fieldbrain.service; curl scrapes /metrics
  etcd-server haproxy  # the [cluster] tests start a fleet: etcd holds robot ownership (docs/fleet.md)
)
