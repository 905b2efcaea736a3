// Every test suite links this: a test that dies of a signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGABRT) prints the stack it died with before it goes. Catch2 reports which test case died
// and then hands the signal on to the handler that was there before it, which is this one.
//
// Why: a crash on a machine without a debugger (a lent GPU machine, a CI root) otherwise says
// only "SIGSEGV" and the test's name, and the machine is gone before anyone can look again.
// Function names come from addr2line (binutils) reading each binary's symbol table, so Release
// builds without debug information still name their functions; file and line appear where the
// build has them.
//
// Formatting a stack is not async-signal-safe (it runs addr2line through popen). The process is
// dying anyway: the worst case is a lost report, never a changed test result, because the signal
// is raised again with its default action afterwards, so the exit status is the signal's.
// (Boost.Stacktrace's addr2line backend would do this, but Boost 1.74's passes addr2line the
// run-time address, which names nothing in a position-independent binary.)
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace fieldbrain::test::crash_report {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void write_stderr(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// "function at file:line" for an address inside `module`, from addr2line; empty if unknown.
std::string addr2line(const char* module, std::uintptr_t address) {
  char command[4096];
  std::snprintf(command, sizeof command, "addr2line -C -f -e '%s' 0x%jx 2>/dev/null", module,
                static_cast<std::uintmax_t>(address));
  FILE* pipe = ::popen(command, "r");
  if (pipe == nullptr) return {};
  char function[2048] = {0}, place[2048] = {0};
  const bool read = std::fgets(function, sizeof function, pipe) != nullptr &&
                    std::fgets(place, sizeof place, pipe) != nullptr;
  ::pclose(pipe);
  if (!read || function[0] == '?') return {};
  function[std::strcspn(function, "\n")] = 0;
  place[std::strcspn(place, "\n")] = 0;
  // "file:?" (no line information in a Release build) says nothing the function name doesn't.
  const std::size_t length = std::strlen(place);
  const bool has_line =
      place[0] != '?' && !(length >= 2 && std::strcmp(place + length - 2, ":?") == 0);
  return std::string(function) + (has_line ? std::string(" at ") + place : "");
}

// One line per frame: the module, the offset addr2line wants, and the name it finds there.
std::string describe(void* pc, int index) {
  char line[512];
  Dl_info info{};
  if (::dladdr(pc, &info) == 0 || info.dli_fname == nullptr) {
    std::snprintf(line, sizeof line, "%2d# %p (no module)\n", index, pc);
    return line;
  }
  // A shared object or a position-independent executable is addressed from its load base; a
  // fixed-address executable (ELF type EXEC) by its run-time address.
  const auto* header = static_cast<const Elf64_Ehdr*>(info.dli_fbase);
  const auto address = reinterpret_cast<std::uintptr_t>(pc) - 1;  // inside the call, not after
  const std::uintptr_t in_module =
      header->e_type == ET_EXEC ? address
                                : address - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  std::snprintf(line, sizeof line, "%2d# %s +0x%jx  ", index, info.dli_fname,
                static_cast<std::uintmax_t>(in_module));
  std::string name = addr2line(info.dli_fname, in_module);
  if (name.empty() && info.dli_sname != nullptr) name = info.dli_sname;
  return line + (name.empty() ? std::string("?") : name) + "\n";
}

void print_stack_and_die(int sig) {
  // Back to the default first: a second fault while formatting ends the process at once.
  for (int s : kSignals) std::signal(s, SIG_DFL);
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  const char* name = ::strsignal(sig);
  write_stderr(std::string("\nfieldbrain tests: fatal signal ") + std::to_string(sig) + " (" +
               (name ? name : "?") + "); the stack, innermost frame first:\n");
  for (int i = 0; i < count; ++i) write_stderr(describe(frames[i], i));
  write_stderr("fieldbrain tests: end of stack\n");
  std::raise(sig);
}

struct Installer {
  Installer() {
    struct sigaction action {};
    action.sa_handler = print_stack_and_die;
    sigemptyset(&action.sa_mask);
    for (int s : kSignals) ::sigaction(s, &action, nullptr);
  }
};

const Installer installed;

}  // namespace
}  // namespace fieldbrain::test::crash_report
