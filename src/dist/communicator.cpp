// Communicator: validation of the collectives' operands, stream ordering, and the exchange choice.
#include "ember/dist/communicator.h"

#include <string>
#include <utility>
#include <vector>

#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"
#include "exchange.h"

namespace ember::dist {

using ring::Form;
using ring::RnsBasis;
using ring::RnsPoly;

bool nccl_compiled() {
#if defined(EMBER_WITH_NCCL)
  return true;
#else
  return false;
#endif
}

struct Communicator::State {
  DeviceSet devices;
  Ranks ranks;
  std::unique_ptr<ExchangeImpl> exchange;

  explicit State(DeviceSet set) : devices(std::move(set)) {}
  ~State() {
    for (std::size_t d = 0; d < ranks.size(); ++d)
      ranks.backends[d]->destroy_stream(ranks.streams[d]);  // waits for its work
    exchange.reset();
  }

  /// Joins rank d's stream with the streams of the polynomials a collective reads or writes
  /// there: it waits for their queued work, and (when the joins go) they wait for the collective.
  template <class... Lists>
  std::vector<std::unique_ptr<backend::StreamJoin>> join(const Lists&... lists) {
    std::vector<std::unique_ptr<backend::StreamJoin>> joins;
    for (std::size_t d = 0; d < ranks.size(); ++d) {
      std::vector<backend::Stream> streams;
      (streams.push_back((*lists[d]).stream()), ...);
      joins.push_back(
          std::make_unique<backend::StreamJoin>(*ranks.backends[d], ranks.streams[d], streams));
    }
    return joins;
  }

  /// Throws unless `polys` holds one polynomial per rank, on that rank's device, of one ring and
  /// form (and, with `same_basis`, one basis).
  template <class P>
  void check_ranks(const std::vector<P*>& polys, const char* op, const char* what,
                   bool same_basis) const {
    if (polys.size() != devices.size())
      throw ParameterError(std::string(op) + ": " + std::to_string(polys.size()) + " " + what +
                           " for " + std::to_string(devices.size()) + " devices " + devices.str() +
                           "; give one per device");
    for (std::size_t d = 0; d < polys.size(); ++d) {
      if (!polys[d])
        throw ParameterError(std::string(op) + ": " + what + "[" + std::to_string(d) + "] is null");
      if (!(polys[d]->device() == devices[d]))
        throw MismatchError(std::string(op) + ": " + what + "[" + std::to_string(d) + "] is on " +
                            polys[d]->device().str() + " but rank " + std::to_string(d) + " is " +
                            devices[d].str() + "; move it there with to()");
      if (polys[d]->basis().context() != polys[0]->basis().context())
        throw MismatchError(std::string(op) + ": " + what + " of different rings");
      if (polys[d]->form() != polys[0]->form())
        throw MismatchError(std::string(op) + ": " + what + " in different forms (coeff and eval)");
      if (same_basis && polys[d]->basis() != polys[0]->basis())
        throw MismatchError(std::string(op) + ": " + what + " over different bases");
    }
  }
  void check_reduce(const char* op) const {
    if (devices.size() > kMaxReduceDevices)
      throw ParameterError(std::string(op) + ": sums over at most 8 devices (64-bit words of " +
                           "residues below 2^61), got " + std::to_string(devices.size()));
  }
};

Communicator::Communicator(DeviceSet devices, Exchange exchange)
    : state_(std::make_unique<State>(std::move(devices))) {
  State& s = *state_;
  const bool gpus = s.devices.kind() == backend::DeviceKind::cuda;
  if (exchange == Exchange::nccl && !gpus)
    throw DeviceError("NCCL exchanges words between GPUs; the CPU devices " + s.devices.str() +
                      " use Exchange::copy");
  if (exchange == Exchange::nccl && !nccl_compiled())
    throw DeviceError(
        "this build of Ember has no NCCL (EMBER_NCCL): rebuild with NCCL found, or "
        "use Exchange::copy");
  for (const Device& d : s.devices.devices()) {
    auto& be = backend::backend_for(d);  // DeviceError for a device that does not exist
    s.ranks.backends.push_back(&be);
    s.ranks.streams.push_back(be.create_stream());
  }
#if defined(EMBER_WITH_NCCL)
  if (gpus && exchange != Exchange::copy) s.exchange = make_nccl_exchange(s.devices);
#endif
  if (!s.exchange) s.exchange = make_copy_exchange();
}

Communicator::~Communicator() = default;
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;

const DeviceSet& Communicator::devices() const { return state_->devices; }
std::size_t Communicator::size() const { return state_->devices.size(); }
std::string Communicator::exchange_name() const { return state_->exchange->name(); }
bool Communicator::uses_nccl() const { return exchange_name() == "nccl"; }
backend::Stream Communicator::stream(std::size_t rank) const {
  if (rank >= size())
    throw ParameterError("rank " + std::to_string(rank) + " of " + std::to_string(size()));
  return state_->ranks.streams[rank];
}

void Communicator::broadcast_async(const PolyRefs& polys, std::size_t root) {
  State& s = *state_;
  s.check_ranks(polys, "broadcast", "polynomials", true);
  if (root >= size())
    throw ParameterError("broadcast: root " + std::to_string(root) + " is not a rank of " +
                         s.devices.str());
  std::vector<u64*> bufs;
  for (RnsPoly* p : polys) bufs.push_back(p->data());
  const auto joins = s.join(polys);
  s.exchange->broadcast(s.ranks, bufs, polys[root]->words(), root);
}

namespace {
template <class P>
std::vector<RowRange> ranges_of(const std::vector<P*>& parts) {
  std::vector<RowRange> out;
  std::size_t at = 0;
  for (const RnsPoly* p : parts) {
    out.push_back({at, at + p->limbs()});
    at += p->limbs();
  }
  return out;
}

std::vector<u32> joined_ids(const ConstPolyRefs& parts) {
  std::vector<u32> ids;
  for (const RnsPoly* p : parts)
    ids.insert(ids.end(), p->basis().ids().begin(), p->basis().ids().end());
  return ids;
}

std::vector<u32> slice(const std::vector<u32>& ids, RowRange r) {
  return std::vector<u32>(ids.begin() + r.begin, ids.begin() + r.end);
}
}  // namespace

void Communicator::all_gather_into_async(const ConstPolyRefs& parts, const PolyRefs& wholes) {
  State& s = *state_;
  s.check_ranks(parts, "all_gather", "parts", false);
  s.check_ranks(wholes, "all_gather", "outputs", true);
  if (wholes[0]->basis().context() != parts[0]->basis().context() ||
      wholes[0]->basis().ids() != joined_ids(parts))
    throw MismatchError("all_gather: the outputs' basis is not the parts' primes in rank order");
  const auto ranges = ranges_of(parts);
  std::vector<const u64*> in;
  std::vector<u64*> out;
  for (std::size_t d = 0; d < size(); ++d) {
    in.push_back(parts[d]->data());
    out.push_back(wholes[d]->data());
    wholes[d]->set_form(parts[0]->form());
  }
  const auto joins = s.join(parts, wholes);
  s.exchange->all_gather(s.ranks, in, out, ranges, parts[0]->n());
}

std::vector<RnsPoly> Communicator::all_gather_async(const ConstPolyRefs& parts) {
  state_->check_ranks(parts, "all_gather", "parts", false);
  // ParameterError when two parts share a prime.
  const RnsBasis whole(parts[0]->basis().context(), joined_ids(parts));
  std::vector<RnsPoly> wholes;
  for (std::size_t d = 0; d < size(); ++d)
    wholes.emplace_back(whole, parts[0]->form(), devices()[d], parts[d]->stream());
  all_gather_into_async(parts, refs(wholes));
  return wholes;
}

void Communicator::reduce_scatter_into_async(const ConstPolyRefs& wholes, const PolyRefs& parts) {
  State& s = *state_;
  s.check_reduce("reduce_scatter");
  s.check_ranks(wholes, "reduce_scatter", "polynomials", true);
  s.check_ranks(parts, "reduce_scatter", "outputs", false);
  const auto ranges = ranges_of(parts);
  const auto& ids = wholes[0]->basis().ids();
  if (ranges.back().end != ids.size())
    throw ParameterError("reduce_scatter: the outputs hold " + std::to_string(ranges.back().end) +
                         " rows in all, the polynomials " + std::to_string(ids.size()));
  std::vector<const u64*> in;
  std::vector<u64*> out;
  std::vector<backend::BasisView> views;
  for (std::size_t d = 0; d < size(); ++d) {
    if (parts[d]->basis().context() != wholes[0]->basis().context() ||
        parts[d]->basis().ids() != slice(ids, ranges[d]))
      throw MismatchError("reduce_scatter: output " + std::to_string(d) + "'s basis is not rows [" +
                          std::to_string(ranges[d].begin) + ", " + std::to_string(ranges[d].end) +
                          ") of the polynomials' basis");
    in.push_back(wholes[d]->data());
    out.push_back(parts[d]->data());
    views.push_back(wholes[d]->view());
    parts[d]->set_form(wholes[0]->form());
  }
  const auto joins = s.join(wholes, parts);
  s.exchange->reduce_scatter(s.ranks, in, out, ranges, wholes[0]->n(), views);
}

std::vector<RnsPoly> Communicator::reduce_scatter_async(const ConstPolyRefs& wholes,
                                                        const std::vector<RowRange>& ranges) {
  state_->check_ranks(wholes, "reduce_scatter", "polynomials", true);
  const std::size_t rows = wholes[0]->limbs();
  const auto split = ranges.empty() ? partition_rows(rows, size()) : ranges;
  check_partition(split, rows, size());
  const auto& basis = wholes[0]->basis();
  std::vector<RnsPoly> parts;
  for (std::size_t d = 0; d < size(); ++d)
    parts.emplace_back(RnsBasis(basis.context(), slice(basis.ids(), split[d])), wholes[0]->form(),
                       devices()[d], wholes[d]->stream());
  reduce_scatter_into_async(wholes, refs(parts));
  return parts;
}

void Communicator::all_reduce_async(const PolyRefs& polys) {
  State& s = *state_;
  s.check_reduce("all_reduce");
  s.check_ranks(polys, "all_reduce", "polynomials", true);
  std::vector<u64*> bufs;
  std::vector<backend::BasisView> views;
  for (RnsPoly* p : polys) {
    bufs.push_back(p->data());
    views.push_back(p->view());
  }
  const auto joins = s.join(polys);
  s.exchange->all_reduce(s.ranks, bufs, polys[0]->limbs(), polys[0]->n(), views);
}

void Communicator::synchronize() {
  for (std::size_t d = 0; d < size(); ++d)
    state_->ranks.backends[d]->synchronize(state_->ranks.streams[d]);
}

void Communicator::broadcast(const PolyRefs& polys, std::size_t root) {
  broadcast_async(polys, root);
  synchronize();
}
std::vector<RnsPoly> Communicator::all_gather(const ConstPolyRefs& parts) {
  auto out = all_gather_async(parts);
  synchronize();
  return out;
}
std::vector<RnsPoly> Communicator::reduce_scatter(const ConstPolyRefs& wholes,
                                                  const std::vector<RowRange>& ranges) {
  auto out = reduce_scatter_async(wholes, ranges);
  synchronize();
  return out;
}
void Communicator::all_reduce(const PolyRefs& polys) {
  all_reduce_async(polys);
  synchronize();
}

RnsPoly take_rows(const RnsPoly& whole, RowRange range, backend::Device device,
                  backend::Stream stream) {
  if (range.end <= range.begin || range.end > whole.limbs())
    throw ParameterError("take_rows: rows [" + std::to_string(range.begin) + ", " +
                         std::to_string(range.end) + ") of a polynomial of " +
                         std::to_string(whole.limbs()) + " rows");
  const auto& ids = whole.basis().ids();
  RnsPoly part(RnsBasis(whole.basis().context(), slice(ids, range)), whole.form(), device, stream);
  auto& dst = part.backend();
  auto& src = whole.backend();
  backend::copy_between_devices(dst, part.data(), part.stream(), src,
                                whole.data() + range.begin * whole.n(), whole.stream(),
                                range.size() * whole.n() * sizeof(u64));
  return part;
}

}  // namespace ember::dist
