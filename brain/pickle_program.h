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
// use it without one library depending on the other (like brain/plain_pickle.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace fieldbrain {

constexpr uint32_t kMaxPickleDepth = 100;

// "" when `data` (`size` bytes) is a program the writers above could have produced; otherwise
// why not, starting "data.pkl".
inline std::string pickle_program_problem(const char* data, uint64_t size) {
  const auto byte = [&](uint64_t at) { return uint64_t(static_cast<unsigned char>(data[at])); };
  const auto le = [&](uint64_t at, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | byte(at + uint64_t(i));
    return v;
  };
  struct Object {
    uint32_t depth = 1;
    bool complete = false;  // placed in another object: never changed again
  };
  std::vector<Object> objects;
  std::vector<uint64_t> stack;  // object indices
  std::vector<uint64_t> marks;  // stack heights at each MARK
  std::vector<uint64_t> memo;   // object indices, by memo id
  const auto floor = [&] { return marks.empty() ? uint64_t(0) : marks.back(); };
  const auto items = [&] { return stack.size() - floor(); };  // above the last MARK
  const auto make = [&](uint32_t depth) {
    objects.push_back({depth, false});
    stack.push_back(objects.size() - 1);
  };
  // Places `child` in `parent`: the child is complete from now on; the parent must not be.
  std::string problem;
  const auto place = [&](uint64_t parent, uint64_t child) {
    objects[child].complete = true;
    if (objects[parent].complete) {
      problem = "data.pkl changes an object after it was placed in another";
      return;
    }
    objects[parent].depth = std::max(objects[parent].depth, objects[child].depth + 1);
    if (objects[parent].depth > kMaxPickleDepth) {
      problem = "data.pkl nests deeper than " + std::to_string(kMaxPickleDepth) + " levels";
    }
  };
  // A new object made of the top `n` items (n = 0: none).
  const auto combine = [&](uint64_t n) {
    const uint64_t parent = objects.size();
    objects.push_back({1, false});
    for (uint64_t i = stack.size() - n; i < stack.size() && problem.empty(); ++i) {
      place(parent, stack[i]);
    }
    stack.resize(stack.size() - n);
    stack.push_back(parent);
  };
  const auto pop_to_mark = [&] {
    const uint64_t n = items();
    marks.pop_back();
    return n;
  };
  const auto name = [](uint64_t op) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", unsigned(op));
    return std::string(buf);
  };

  for (uint64_t p = 0; p < size;) {
    const uint64_t at = p, op = byte(p++);
    uint64_t arg = 0, len_bytes = 0;  // fixed argument bytes; bytes of a length prefix
    int lines = 0;                    // newline-ended text arguments
    // One line per argument shape, as pickletools lists the opcodes.
    // clang-format off
    switch (op) {
      case 'K': case 'h': case 'q': case 0x80: arg = 1; break;
      case 'M': arg = 2; break;
      case 'J': case 'j': case 'r': arg = 4; break;
      case 'G': case 0x95: arg = 8; break;
      case 'U': case 'C': case 0x8a: case 0x8c: len_bytes = 1; break;
      case 'X': case 'T': case 'B': case 0x8b: len_bytes = 4; break;
      case 0x8d: case 0x8e: len_bytes = 8; break;
      case 'c': lines = 2; break;
      case '(': case '.': case 'N': case ')': case ']': case '}': case 'a': case 'e': case 'b':
      case 'd': case 'l': case 's': case 'u': case 't': case 'R': case 'Q': case 0x81: case 0x85:
      case 0x86: case 0x87: case 0x88: case 0x89: case 0x93: case 0x94: break;
      default:
        return "data.pkl opcode " + name(op) + " at byte " + std::to_string(at) +
               " is not one torch.save writes";
    }
    // clang-format on
    for (int n = 0; n < lines; ++n) {
      while (p < size && data[p] != '\n') ++p;
      if (p++ >= size) return "data.pkl ends inside an opcode";
    }
    if (arg + len_bytes > size - p) return "data.pkl ends inside an opcode";
    const uint64_t len = len_bytes ? le(p + arg, int(len_bytes)) : 0;
    if (len > size - p - arg - len_bytes) {
      return "data.pkl claims " + std::to_string(len) + " bytes past its end";
    }
    const uint64_t id = (op == 'h' || op == 'q') ? byte(p) : (op == 'j' || op == 'r') ? le(p, 4) : 0;
    p += arg + len_bytes + len;

    const auto need = [&](uint64_t n) { return items() >= n; };
    const auto bad = [&](const char* what) {
      return "data.pkl: " + std::string(what) + " (opcode " + name(op) + " at byte " +
             std::to_string(at) + ")";
    };
    switch (op) {
      case 0x80: case 0x95: break;  // PROTO, FRAME
      case '(': marks.push_back(stack.size()); break;
      case '.':  // STOP
        if (!marks.empty() || stack.size() != 1) return bad("STOP without exactly one result");
        return "";
      case 'h': case 'j':  // BINGET, LONG_BINGET
        if (id >= memo.size()) {
          return "data.pkl memo entry " + std::to_string(id) + " read before it was written";
        }
        stack.push_back(memo[id]);
        break;
      case 'q': case 'r': case 0x94:  // BINPUT, LONG_BINPUT, MEMOIZE
        if (op != 0x94 && id != memo.size()) {
          return "data.pkl memo index " + std::to_string(id) + " out of order";
        }
        if (!need(1)) return bad("nothing to store in the memo");
        memo.push_back(stack.back());
        break;
      case 'a': case 'b':  // APPEND (a list, an item), BUILD (an object, its state)
        if (!need(2)) {
          return bad(op == 'a' ? "APPEND without a list and an item"
                               : "BUILD without an object and its state");
        }
        place(stack[stack.size() - 2], stack.back());
        stack.pop_back();
        break;
      case 's':  // SETITEM
        if (!need(3)) return bad("SETITEM without a dict, a key and a value");
        place(stack[stack.size() - 3], stack[stack.size() - 2]);
        if (problem.empty()) place(stack[stack.size() - 3], stack.back());
        stack.resize(stack.size() - 2);
        break;
      case 'e': case 'u': {  // APPENDS, SETITEMS
        if (marks.empty()) return bad("no MARK before it");
        const uint64_t n = items(), below = marks.size() > 1 ? marks[marks.size() - 2] : 0;
        if (floor() <= below) return bad("no list or dict under its MARK");
        if (op == 'u' && n % 2 != 0) return bad("SETITEMS with an odd number of items");
        const uint64_t parent = stack[floor() - 1];
        for (uint64_t i = floor(); i < stack.size() && problem.empty(); ++i) {
          place(parent, stack[i]);
        }
        pop_to_mark();
        stack.resize(stack.size() - n);
        break;
      }
      case 'l': case 't': case 'd': {  // LIST, TUPLE, DICT
        if (marks.empty()) return bad("no MARK before it");
        if (op == 'd' && items() % 2 != 0) return bad("DICT with an odd number of items");
        combine(pop_to_mark());
        break;
      }
      case 0x85: case 0x86: case 0x87:  // TUPLE1, TUPLE2, TUPLE3
        if (!need(op - 0x84)) return bad("TUPLEn without its n items");
        combine(op - 0x84);
        break;
      case 'R': case 0x81: case 0x93:  // REDUCE, NEWOBJ, STACK_GLOBAL: two items make one
        if (!need(2)) return bad("REDUCE, NEWOBJ or STACK_GLOBAL without its two items");
        combine(2);
        break;
      case 'Q':  // BINPERSID
        if (!need(1)) return bad("BINPERSID without its id");
        combine(1);
        break;
      default:  // every other accepted opcode pushes one new value
        make(1);
        break;
    }
    if (!problem.empty()) {
      return problem + " (opcode " + name(op) + " at byte " + std::to_string(at) + ")";
    }
  }
  return "data.pkl has no STOP";
}

}  // namespace fieldbrain
