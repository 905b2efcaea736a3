// A torch.save-style archive (zip, valid CRC-32s, "archive/version") around a data.pkl of the
// test's choosing: for the checks of brain/pickle_program.h, which must see the malformed
// program itself rather than a damaged zip. Shared by the brain's and the HRR's archive tests.
#pragma once

#include <string>

#include <caffe2/serialize/inline_container.h>

namespace fieldbrain::test {

inline std::string archive_with_pickle(const std::string& pickle) {
  std::string bytes;
  caffe2::serialize::PyTorchStreamWriter writer([&bytes](const void* data, size_t n) {
    bytes.append(static_cast<const char*>(data), n);
    return n;
  });
  writer.writeRecord("data.pkl", pickle.data(), pickle.size());
  writer.writeEndOfFile();
  return bytes;
}

// Malformed pickle programs, each with the words of the reason it must be refused for.
struct BadPickle {
  const char* what;
  std::string program;
  const char* reason;
};

inline std::vector<BadPickle> bad_pickles() {
  using namespace std::string_literals;
  std::string deep = "\x80\x02"s;
  for (int i = 0; i < 201; ++i) deep += ']';   // 201 empty lists...
  for (int i = 0; i < 200; ++i) deep += 'a';   // ...each appended to the one below
  deep += '.';
  return {
      // fuzz-brain_save's crash: LibTorch 1.13 read past its stack (SEGV).
      {"SETITEMS over an odd number of items", "\x80\x02}(X\x06\x00\x00\x00" "formatu."s,
       "SETITEMS with an odd number of items"},
      {"a memo entry read before it is written", "\x80\x02h\x05."s, "read before it was written"},
      {"a memo index far ahead (LibTorch grows its table to it)", "\x80\x02]r\xff\xff\xff\x0f."s,
       "out of order"},
      {"a list that contains itself through another", "\x80\x02]q\x00]q\x01h\x00" "aa."s,
       "changes an object after it was placed in another"},
      {"lists nested 200 deep", deep, "nests deeper than 100"},
      {"an opcode torch.save never writes", "\x80\x02\x00."s, "is not one torch.save writes"},
      {"APPENDS without a MARK", "\x80\x02]Ne."s, "no MARK before it"},
      {"a STOP that leaves two results", "\x80\x02NN."s, "STOP without exactly one result"},
      {"no STOP", "\x80\x02N"s, "has no STOP"},
  };
}

}  // namespace fieldbrain::test
