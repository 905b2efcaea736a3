// torch.save-compatible bytes of an IValue made of plain containers: a zip archive holding
// `data.pkl` and one record per tensor storage, exactly what Python's torch.save writes.
//
// Why not torch::pickle_save: it tags every dict and list with its TorchScript type
// (torch.jit._pickle.restore_type_tag), a global that Python's torch.load(path,
// weights_only=True) refuses (the default from PyTorch 2.6). With tagging off, a dict of
// strings, ints and tensors unpickles with weights_only=True on every PyTorch from 1.13, and
// torch::pickle_load still reads it (as a dict of Any).
//
// Header-only so that both the brain archive (brain/persistence.cpp) and the HRR archive
// (hrr/persistence.cpp) write the same format without one library depending on the other.
#pragma once

#include <string>
#include <vector>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

namespace fieldbrain {

inline std::string pickle_save_plain(const c10::IValue& value) {
  std::vector<char> pickle;
  torch::jit::Pickler pickler(
      [&pickle](const char* data, size_t n) { pickle.insert(pickle.end(), data, data + n); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
      /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();

  std::string bytes;
  bytes.reserve(pickle.size() + 4096);
  {
    caffe2::serialize::PyTorchStreamWriter writer([&bytes](const void* data, size_t n) {
      bytes.append(static_cast<const char*>(data), n);
      return n;
    });
    torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(),
                                       writer);
    writer.writeEndOfFile();
  }
  return bytes;
}

}  // namespace fieldbrain
