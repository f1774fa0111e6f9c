// circuit::run: validates a run's inputs, devices and options, sizes the pools, plans on the
// host (plan.cpp), then runs the plan on the devices (execute.cpp).
#include "ember/circuit/run.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "ember/core/errors.h"
#include "ember/dist/device_set.h"
#include "execute.h"
#include "plan.h"

namespace ember::circuit {

const char* mode_name(Mode m) { return m == Mode::wave ? "wave" : "dataflow"; }

Mode parse_mode(const std::string& name) {
  if (name == "wave") return Mode::wave;
  if (name == "dataflow") return Mode::dataflow;
  throw ParameterError("unknown circuit run mode '" + name + "': use 'wave' or 'dataflow'");
}

namespace {

constexpr std::size_t kMinLive = 8;

void check_devices(const cggi::Context& home, const std::vector<DeviceKit>& devices) {
  if (devices.empty()) throw ParameterError("circuit run: name at least one device");
  std::vector<backend::Device> list;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    const DeviceKit& k = devices[r];
    if (!k.ctx || !k.key) throw ParameterError("circuit run: device kit without context or key");
    const std::string where = k.ctx->device().str();
    if (k.ctx->params_id() != home.params_id())
      throw MismatchError("circuit run: the context on " + where +
                          " has other parameters than the inputs' context");
    if (k.key->params_id != home.params_id())
      throw MismatchError("circuit run: the server key for " + where +
                          " belongs to a context with other parameters");
    if (!(k.key->device() == k.ctx->device()))
      throw MismatchError("circuit run: the server key for " + where + " is on " +
                          k.key->device().str() + ": copy it there with ServerKey::to");
    if (k.key->key_id != devices[0].key->key_id)
      throw MismatchError("circuit run: the devices' server keys are of different client keys");
    list.push_back(k.ctx->device());
  }
  dist::DeviceSet set(list);  // distinct devices of one kind (ParameterError otherwise)
}

void check_inputs(const Circuit& c, const cggi::Context& home,
                  const std::vector<cggi::LweBatch>& inputs, std::uint64_t key_id) {
  if (inputs.size() != c.inputs().size())
    throw ParameterError("circuit run: " + std::to_string(c.inputs().size()) +
                         " input ports, got " + std::to_string(inputs.size()) + " batches");
  for (std::size_t p = 0; p < inputs.size(); ++p) {
    const cggi::LweBatch& b = inputs[p];
    const Port& port = c.inputs()[p];
    if (b.count == 0) continue;
    if (b.count != port.nbits())
      throw ParameterError("circuit input '" + port.name + "' must be " +
                           std::to_string(port.nbits()) + " encrypted bits, got " +
                           std::to_string(b.count));
    if (b.params_id != home.params_id() || !b.words || b.dim != home.shape().big_dim() ||
        b.torus_bits != home.shape().torus_bits)
      throw MismatchError("circuit input '" + port.name +
                          "' belongs to a context with other parameters");
    if (b.message_bits != 0)
      throw MismatchError("circuit input '" + port.name + "' holds integers, not bits");
    if (!(b.words->backend()->device() == home.device()))
      throw MismatchError("circuit input '" + port.name + "' is on " +
                          b.words->backend()->device().str() + ", its context on " +
                          home.device().str());
    if (b.key_id != 0 && b.key_id != key_id)
      throw MismatchError("circuit input '" + port.name +
                          "' was encrypted under another key than the server key's");
  }
}

/// Ciphertexts a device's pool may hold: half its free memory, less one step's scratch
/// (operand batches, key-switched copies) for its share of the widest wave.
std::size_t default_capacity(const Circuit& c, const cggi::Context& ctx, std::size_t devices) {
  const auto& s = ctx.shape();
  const std::size_t ct = (s.big_dim() + 1) * s.word_bytes(), small = (s.n + 1) * s.word_bytes();
  const std::size_t share = c.stats().widest_wave_bootstraps / devices + 1;
  const std::size_t scratch = share * (3 * ct + small);
  const std::size_t half = ctx.backend().memory_available() / 2;
  const std::size_t cap = half > scratch ? (half - scratch) / ct : 0;
  return std::clamp<std::size_t>(cap, kMinLive, c.num_nodes() + 1);
}

}  // namespace

RunResult run(const Circuit& c, const cggi::Context& home,
              const std::vector<cggi::LweBatch>& inputs, const std::vector<DeviceKit>& devices,
              const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  check_devices(home, devices);
  const std::uint64_t key_id = devices[0].key->key_id;
  check_inputs(c, home, inputs, key_id);
  if (options.streams_per_device < 1 || options.streams_per_device > 64)
    throw ParameterError("streams_per_device must be in [1, 64], got " +
                         std::to_string(options.streams_per_device));
  if (options.max_live_ciphertexts != 0 && options.max_live_ciphertexts < kMinLive)
    throw ParameterError("max_live_ciphertexts must be 0 (from free memory) or at least " +
                         std::to_string(kMinLive) + ", got " +
                         std::to_string(options.max_live_ciphertexts));

  detail::PlanInput in;
  in.devices = devices.size();
  in.home = static_cast<int>(devices.size());
  for (std::size_t r = 0; r < devices.size(); ++r)
    if (devices[r].ctx->device() == home.device()) in.home = static_cast<int>(r);
  for (const auto& b : inputs) in.input_present.push_back(b.count != 0);
  for (const DeviceKit& k : devices)
    in.capacity.push_back(options.max_live_ciphertexts
                              ? options.max_live_ciphertexts
                              : default_capacity(c, *k.ctx, devices.size()));
  in.options = options;
  in.options.progress = nullptr;  // the plan has no use for it
  if (in.options.min_gates_per_device == 0)
    in.options.min_gates_per_device =
        devices[0].ctx->device().kind == backend::DeviceKind::cuda ? 32 : 1;
  detail::Plan plan = detail::make_plan(c, in);
  const double plan_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<detail::Location> locations;
  for (const DeviceKit& k : devices) locations.push_back({k.ctx, k.key});
  if (plan.locations > devices.size()) locations.push_back({&home, nullptr});
  RunResult result;
  result.stats = plan.stats;
  result.stats.plan_seconds = plan_seconds;
  result.outputs =
      detail::execute({c, plan, std::move(locations), inputs, options, key_id}, result.stats);
  result.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace ember::circuit
