// Polls a condition that another thread (the server, a child process) makes true: the
// server suite's name for test/support/wait_until.h.
#pragma once

#include "test/support/wait_until.h"

namespace fieldbrain::server::testing {

// True as soon as pred() is; false when it is still false after timeout_s (generous by default:
// a busy machine must not fail a working build).
template <typename Pred>
bool eventually(Pred pred, double timeout_s = fieldbrain::test::kGenerousDeadlineS) {
  return fieldbrain::test::wait_until(pred, timeout_s);
}

}  // namespace fieldbrain::server::testing
