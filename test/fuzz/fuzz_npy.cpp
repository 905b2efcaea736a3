// libFuzzer harness: the .npy reader of `fieldbrain replay` (app/fieldbrain/recording.h) on a
// whole file's bytes. It refuses with std::runtime_error naming the file, or returns values
// that lie in the file: never more than (size - header) / 4 of them, and as many as the shape
// says. Messages quote the file's text only through printable ASCII.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "app/fieldbrain/recording.h"

using namespace fieldbrain;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const NpyArray a = parse_npy_f32(bytes, "fuzz.npy");
    uint64_t n = 1;
    for (int64_t d : a.shape) {
      check(d >= 0);
      n *= uint64_t(d);  // cannot wrap: the product was checked against the size
    }
    check(a.values.size() == n);
    check(n <= size / 4);
    // The header alone, as read_npy_f32 sees it: the same answer with a larger file.
    const NpyHeader h = parse_npy_header(bytes.substr(0, kNpyMaxHead), size + 4096, "fuzz.npy");
    check(h.shape == a.shape && h.values == n);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    check(what.rfind("fuzz.npy: ", 0) == 0);
    for (char c : what) check(c >= 0x20 && c < 0x7f);
  }
  return 0;
}
