// The scheduler's device half (execute.cpp): enqueues a plan's operations on the devices'
// streams, fenced by events, and collects the outputs on the home device.
#pragma once

#include <vector>

#include "ember/cggi/context.h"
#include "plan.h"

namespace ember::circuit::detail {

/// A location of the plan: a device (context and server key there) or the home device when it
/// is not one of them (ctx only, key null).
struct Location {
  const cggi::Context* ctx = nullptr;
  const cggi::ServerKey* key = nullptr;
};

struct ExecuteInput {
  const Circuit& circuit;
  const Plan& plan;
  std::vector<Location> locations;            // plan.locations of them
  const std::vector<cggi::LweBatch>& inputs;  // per input port (count 0: absent)
  const RunOptions& options;
  std::uint64_t key_id = 0;  // the outputs' key
};

/// Runs the plan; returns one batch per output port on the home location, and adds the
/// issue and wait times to `stats`.
std::vector<cggi::LweBatch> execute(const ExecuteInput& x, RunStats& stats);

}  // namespace ember::circuit::detail
