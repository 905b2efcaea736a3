// File descriptors kept free for what matters most (issue 24 item 2): robots' connections,
// saves, the identity file. Ports that serve people and tools (the web monitor, the monitor
// port) and new recordings refuse work once fewer than `fd_reserve` descriptors are left
// under RLIMIT_NOFILE, instead of taking the last ones and leaving a robot's accept or a
// save to fail with EMFILE ("Too many open files").
#pragma once

namespace fieldbrain::server {

// Descriptors this process may still open: RLIMIT_NOFILE's soft limit minus the open ones
// (counted in /proc/self/fd; a few microseconds per hundred open). A large number when the
// count is not available.
long descriptors_free();

// True when fewer than `reserve` descriptors are free (never when reserve is 0).
bool descriptors_low(int reserve);

}  // namespace fieldbrain::server
