// A check of a pickle program (an archive's data.pkl) before LibTorch's unpickler runs it.
//
// LibTorch's unpickler trusts the program's shape: fuzz-brain_save found a 1 KB save whose
// data.pkl ends a dict with SETITEMS over an odd number of items, and LibTorch 1.13 read past its
// stack and crashed (SEGV). Lengths past the end, memo indices far ahead (each one grows a table)
// and structures nested deep enough to overflow the C++ stack when they are freed are the same
// kind of input. So every archive this project reads (brain saves, HRR vocabularies and item
// memories) is scanned here first, and refused with a reason when it is not a program that
// torch.save or our own writer could have produced:
//   - only the opcodes those writers use (protocol 2, plus the binary forms of later protocols);
//   - every argument and length inside the record;
//   - the stack simulated: each opcode finds the items and the MARK it consumes, dict items come
//     in pairs, STOP leaves exactly one item;
//   - memo entries written in order (a pickler numbers them 0, 1, 2 ...) and read only after;
//   - an object is complete before it is placed in another (so no cycles), and nothing nests
//     deeper than kMaxPickleDepth.
// Header-only: the brain (brain/persistence.cpp) and the HRR library (hrr/persistence.cpp) both
// use it, and the HRR library, which the brain links, must not link the brain back (like
// brain/plain_pickle.h; docs/architecture.md). The check's steps are in pickle_program_detail:
// reading an opcode and its arguments, then running it on a simulated stack.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace fieldbrain {

constexpr uint32_t kMaxPickleDepth = 100;

namespace pickle_program_detail {

inline uint64_t byte_at(const char* data, uint64_t at) {
  return uint64_t(static_cast<unsigned char>(data[at]));
}

// `n` bytes at `at`, little-endian.
inline uint64_t little_endian(const char* data, uint64_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | byte_at(data, at + uint64_t(i));
  return v;
}

inline std::string opcode_name(uint64_t op) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", unsigned(op));
  return std::string(buf);
}

// What follows an opcode in the record.
struct ArgumentShape {
  uint64_t fixed = 0;         // argument bytes
  uint64_t length_bytes = 0;  // bytes of a length prefix (the length's bytes follow)
  int lines = 0;              // newline-ended text arguments
};

// false for an opcode the writers above never use.
inline bool argument_shape(uint64_t op, ArgumentShape& shape) {
  // One line per argument shape, as pickletools lists the opcodes.
  // clang-format off
  switch (op) {
    case 'K': case 'h': case 'q': case 0x80: shape.fixed = 1; return true;
    case 'M': shape.fixed = 2; return true;
    case 'J': case 'j': case 'r': shape.fixed = 4; return true;
    case 'G': case 0x95: shape.fixed = 8; return true;
    case 'U': case 'C': case 0x8a: case 0x8c: shape.length_bytes = 1; return true;
    case 'X': case 'T': case 'B': case 0x8b: shape.length_bytes = 4; return true;
    case 0x8d: case 0x8e: shape.length_bytes = 8; return true;
    case 'c': shape.lines = 2; return true;
    case '(': case '.': case 'N': case ')': case ']': case '}': case 'a': case 'e': case 'b':
    case 'd': case 'l': case 's': case 'u': case 't': case 'R': case 'Q': case 0x81: case 0x85:
    case 0x86: case 0x87: case 0x88: case 0x89: case 0x93: case 0x94: return true;
    default: return false;
  }
  // clang-format on
}

// One opcode read from the record: where it starts, and its memo id (BINGET, BINPUT and their
// LONG_ forms; 0 otherwise).
struct Opcode {
  uint64_t op = 0, at = 0, id = 0;
};

// Reads the opcode at `p` and steps `p` past its arguments, all inside the record; "" or why not.
inline std::string read_opcode(const char* data, uint64_t size, uint64_t& p, Opcode& code) {
  code.at = p;
  code.op = byte_at(data, p++);
  ArgumentShape shape;
  if (!argument_shape(code.op, shape)) {
    return "data.pkl opcode " + opcode_name(code.op) + " at byte " + std::to_string(code.at) +
           " is not one torch.save writes";
  }
  for (int n = 0; n < shape.lines; ++n) {
    while (p < size && data[p] != '\n') ++p;
    if (p++ >= size) return "data.pkl ends inside an opcode";
  }
  if (shape.fixed + shape.length_bytes > size - p) return "data.pkl ends inside an opcode";
  const uint64_t len =
      shape.length_bytes ? little_endian(data, p + shape.fixed, int(shape.length_bytes)) : 0;
  if (len > size - p - shape.fixed - shape.length_bytes) {
    return "data.pkl claims " + std::to_string(len) + " bytes past its end";
  }
  const uint64_t op = code.op;
  code.id = (op == 'h' || op == 'q')   ? byte_at(data, p)
            : (op == 'j' || op == 'r') ? little_endian(data, p, 4)
                                       : 0;
  p += shape.fixed + shape.length_bytes + len;
  return "";
}

// The unpickler's stack, simulated on object indices: what each opcode consumes and makes, the
// memo, and each object's nesting depth and completeness.
class StackMachine {
 public:
  // Runs one opcode: "" to go on, else why the program is refused. `stopped` is set by STOP.
  std::string run(const Opcode& code, bool& stopped) {
    op_ = code.op;
    at_ = code.at;
    std::string refused = run_opcode(code, stopped);
    if (refused.empty() && !problem_.empty()) {
      refused = problem_ + " (opcode " + opcode_name(op_) + " at byte " + std::to_string(at_) + ")";
    }
    return refused;
  }

 private:
  struct Object {
    uint32_t depth = 1;
    bool complete = false;  // placed in another object: never changed again
  };

  std::string run_opcode(const Opcode& code, bool& stopped) {
    // clang-format off
    switch (op_) {
      case 0x80: case 0x95: return "";  // PROTO, FRAME
      case '(': marks_.push_back(stack_.size()); return "";
      case '.':  // STOP
        if (!marks_.empty() || stack_.size() != 1) return bad("STOP without exactly one result");
        stopped = true;
        return "";
      case 'h': case 'j': case 'q': case 'r': case 0x94: return run_memo(code.id);
      case 'a': case 'b': case 's': return run_place();
      case 'e': case 'u': return run_fill_to_mark();
      case 'l': case 't': case 'd': case 0x85: case 0x86: case 0x87: case 'R': case 0x81:
      case 0x93: case 'Q':
        return run_combine();
      default:  // every other accepted opcode pushes one new value
        make();
        return "";
    }
    // clang-format on
  }

  // BINGET, LONG_BINGET; BINPUT, LONG_BINPUT, MEMOIZE.
  std::string run_memo(uint64_t id) {
    if (op_ == 'h' || op_ == 'j') {
      if (id >= memo_.size()) {
        return "data.pkl memo entry " + std::to_string(id) + " read before it was written";
      }
      stack_.push_back(memo_[id]);
      return "";
    }
    if (op_ != 0x94 && id != memo_.size()) {
      return "data.pkl memo index " + std::to_string(id) + " out of order";
    }
    if (!need(1)) return bad("nothing to store in the memo");
    memo_.push_back(stack_.back());
    return "";
  }

  // APPEND (a list, an item), BUILD (an object, its state), SETITEM (a dict, a key, a value).
  std::string run_place() {
    if (op_ == 's') {
      if (!need(3)) return bad("SETITEM without a dict, a key and a value");
      place(stack_[stack_.size() - 3], stack_[stack_.size() - 2]);
      if (problem_.empty()) place(stack_[stack_.size() - 3], stack_.back());
      stack_.resize(stack_.size() - 2);
      return "";
    }
    if (!need(2)) {
      return bad(op_ == 'a' ? "APPEND without a list and an item"
                            : "BUILD without an object and its state");
    }
    place(stack_[stack_.size() - 2], stack_.back());
    stack_.pop_back();
    return "";
  }

  // APPENDS, SETITEMS: the items above the MARK go into the list or dict under it.
  std::string run_fill_to_mark() {
    if (marks_.empty()) return bad("no MARK before it");
    const uint64_t n = items(), below = marks_.size() > 1 ? marks_[marks_.size() - 2] : 0;
    if (floor() <= below) return bad("no list or dict under its MARK");
    if (op_ == 'u' && n % 2 != 0) return bad("SETITEMS with an odd number of items");
    const uint64_t parent = stack_[floor() - 1];
    for (uint64_t i = floor(); i < stack_.size() && problem_.empty(); ++i) {
      place(parent, stack_[i]);
    }
    pop_to_mark();
    stack_.resize(stack_.size() - n);
    return "";
  }

  // The opcodes that make one new object of items they consume.
  std::string run_combine() {
    // clang-format off
    switch (op_) {
      case 'l': case 't': case 'd':  // LIST, TUPLE, DICT
        if (marks_.empty()) return bad("no MARK before it");
        if (op_ == 'd' && items() % 2 != 0) return bad("DICT with an odd number of items");
        combine(pop_to_mark());
        return "";
      case 0x85: case 0x86: case 0x87:  // TUPLE1, TUPLE2, TUPLE3
        if (!need(op_ - 0x84)) return bad("TUPLEn without its n items");
        combine(op_ - 0x84);
        return "";
      case 'Q':  // BINPERSID
        if (!need(1)) return bad("BINPERSID without its id");
        combine(1);
        return "";
      default:  // REDUCE, NEWOBJ, STACK_GLOBAL: two items make one
        if (!need(2)) return bad("REDUCE, NEWOBJ or STACK_GLOBAL without its two items");
        combine(2);
        return "";
    }
    // clang-format on
  }

  std::string bad(const char* what) const {
    return "data.pkl: " + std::string(what) + " (opcode " + opcode_name(op_) + " at byte " +
           std::to_string(at_) + ")";
  }
  uint64_t floor() const { return marks_.empty() ? uint64_t(0) : marks_.back(); }
  uint64_t items() const { return stack_.size() - floor(); }  // above the last MARK
  bool need(uint64_t n) const { return items() >= n; }
  void make() {
    objects_.push_back({1, false});
    stack_.push_back(objects_.size() - 1);
  }
  // Places `child` in `parent`: the child is complete from now on; the parent must not be.
  void place(uint64_t parent, uint64_t child) {
    objects_[child].complete = true;
    if (objects_[parent].complete) {
      problem_ = "data.pkl changes an object after it was placed in another";
      return;
    }
    objects_[parent].depth = std::max(objects_[parent].depth, objects_[child].depth + 1);
    if (objects_[parent].depth > kMaxPickleDepth) {
      problem_ = "data.pkl nests deeper than " + std::to_string(kMaxPickleDepth) + " levels";
    }
  }
  // A new object made of the top `n` items (n = 0: none).
  void combine(uint64_t n) {
    const uint64_t parent = objects_.size();
    objects_.push_back({1, false});
    for (uint64_t i = stack_.size() - n; i < stack_.size() && problem_.empty(); ++i) {
      place(parent, stack_[i]);
    }
    stack_.resize(stack_.size() - n);
    stack_.push_back(parent);
  }
  uint64_t pop_to_mark() {
    const uint64_t n = items();
    marks_.pop_back();
    return n;
  }

  uint64_t op_ = 0, at_ = 0;  // the opcode being run, for the messages
  std::vector<Object> objects_;
  std::vector<uint64_t> stack_;  // object indices
  std::vector<uint64_t> marks_;  // stack heights at each MARK
  std::vector<uint64_t> memo_;   // object indices, by memo id
  std::string problem_;          // set by place(): the first object placed wrongly
};

}  // namespace pickle_program_detail

// "" when `data` (`size` bytes) is a program the writers above could have produced; otherwise
// why not, starting "data.pkl".
inline std::string pickle_program_problem(const char* data, uint64_t size) {
  using namespace pickle_program_detail;
  StackMachine machine;
  for (uint64_t p = 0; p < size;) {
    Opcode code;
    std::string refused = read_opcode(data, size, p, code);
    if (!refused.empty()) return refused;
    bool stopped = false;
    refused = machine.run(code, stopped);
    if (!refused.empty()) return refused;
    if (stopped) return "";
  }
  return "data.pkl has no STOP";
}

}  // namespace fieldbrain
