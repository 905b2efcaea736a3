#include "app/server/stats/descriptor_reserve.h"

#include <dirent.h>
#include <sys/resource.h>

#include <cerrno>

namespace fieldbrain::server {

long descriptors_free() {
  constexpr long kUnknown = 1L << 30;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kUnknown;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return errno == EMFILE || errno == ENFILE ? 0 : kUnknown;  // out already, or no /proc
  long open = -1;  // the directory's own descriptor is not in use afterwards
  while (::readdir(dir) != nullptr) ++open;
  ::closedir(dir);
  open -= 2;  // "." and ".."
  return static_cast<long>(limit.rlim_cur) - open;
}

bool descriptors_low(int reserve) { return reserve > 0 && descriptors_free() < reserve; }

}  // namespace fieldbrain::server
