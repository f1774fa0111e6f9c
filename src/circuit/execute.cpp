// The scheduler's device half: per device a ciphertext pool, the plan's index arrays (uploaded
// once) and a few streams; each operation waits on the events of the operations it depends on
// (the host never blocks between steps) and the host waits once, at the end.
#include "execute.h"

#include <chrono>
#include <memory>
#include <string>

#include "ember/backend/buffer.h"
#include "ember/backend/stream_join.h"
#include "ember/core/errors.h"

namespace ember::circuit::detail {

namespace {

using backend::Backend;
using backend::Buffer;
using backend::Event;
using backend::Stream;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Streams per location (`per` for the plan's operations, then one for incoming copies), given
/// back when the run ends (after their work: destroy_stream waits).
class Streams {
 public:
  Streams(const std::vector<Backend*>& bes, int per) : bes_(bes), s_(bes.size()), per_(per) {
    for (std::size_t l = 0; l < bes.size(); ++l)
      for (int i = 0; i <= per; ++i) s_[l].push_back(bes[l]->create_stream());
  }
  ~Streams() {
    for (std::size_t l = 0; l < s_.size(); ++l)
      for (Stream s : s_[l]) bes_[l]->destroy_stream(s);
  }
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
  Stream at(int loc, int i) const { return s_[loc][i]; }
  /// The stream copies from other devices into `loc` run on.
  Stream incoming(int loc) const { return s_[loc][per_]; }
  void synchronize() {
    for (std::size_t l = 0; l < s_.size(); ++l)
      for (Stream s : s_[l]) bes_[l]->synchronize(s);
  }

 private:
  std::vector<Backend*> bes_;
  std::vector<std::vector<Stream>> s_;
  int per_;
};

/// One event per operation that others wait for, destroyed with the table.
class Events {
 public:
  explicit Events(std::size_t n) : e_(n) {}
  ~Events() {
    for (auto& [be, e] : e_)
      if (be) be->destroy_event(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  void record(std::size_t op, Backend& be, Stream s) {
    e_[op] = {&be, be.create_event()};
    be.record_event(e_[op].second, s);
  }
  Event at(std::size_t op) const { return e_[op].second; }
  void synchronize(std::size_t op) {
    if (e_[op].first) e_[op].first->synchronize_event(e_[op].second);
  }

 private:
  std::vector<std::pair<Backend*, Event>> e_;
};

/// Page-locked host memory for spilled ciphertexts.
class HostStore {
 public:
  HostStore(Backend& be, std::size_t bytes) : be_(be), bytes_(bytes) {
    if (bytes_) p_ = static_cast<char*>(be.allocate_host(bytes_));
  }
  ~HostStore() {
    if (p_) be_.deallocate_host(p_, bytes_);
  }
  HostStore(const HostStore&) = delete;
  HostStore& operator=(const HostStore&) = delete;
  char* data() const { return p_; }

 private:
  Backend& be_;
  std::size_t bytes_;
  char* p_ = nullptr;
};

class Executor {
 public:
  explicit Executor(const ExecuteInput& x)
      : x_(x),
        plan_(x.plan),
        shape_(x.locations[plan_.home].ctx->shape()),
        words_(shape_.big_dim() + 1),
        ct_bytes_(words_ * shape_.word_bytes()),
        mu_(std::uint64_t{1} << (shape_.torus_bits - 3)) {
    for (const Location& l : x.locations) bes_.push_back(&l.ctx->backend());
  }

  std::vector<cggi::LweBatch> run(RunStats& stats) {
    setup();
    Streams streams(bes_, plan_.streams);
    Events events(plan_.ops.size());
    bool all_cpu = true;
    for (Backend* be : bes_) all_cpu = all_cpu && be->device().kind == backend::DeviceKind::cpu;
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t reported = 0, gates_done = 0;
    auto report = [&](std::size_t step) {  // steps [reported, step] are complete
      for (; reported <= step && reported < plan_.steps; ++reported) {
        for (std::uint32_t op : plan_.step_tails[reported]) events.synchronize(op);
        gates_done += plan_.gates_per_step[reported];
        if (x_.options.progress)
          x_.options.progress(
              {reported + 1, plan_.steps, gates_done, x_.circuit.num_gates(), since(t0)});
      }
    };
    for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
      const Op& op = plan_.ops[i];
      issue(op, streams, events);
      if (op.signal) events.record(i, *bes_[op.loc], streams.at(op.loc, op.stream));
      // CPU devices finish their work before a call returns: the step is done.
      const bool step_ends = i + 1 == plan_.ops.size() || plan_.ops[i + 1].step != op.step;
      if (all_cpu && step_ends) report(op.step);
    }
    stats.issue_seconds = since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    if (plan_.steps) report(plan_.steps - 1);
    streams.synchronize();
    stats.wait_seconds = since(t1);
    return split_outputs();
  }

 private:
  Backend& be(int loc) const { return *bes_[loc]; }
  const std::uint32_t* idx(int loc, const Span& s) const {
    return index_[loc].as<std::uint32_t>() + s.offset;
  }
  std::uint64_t eighths(int e) const {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(e)) * mu_;
  }

  /// Pools (slot 0: the constant false), index arrays, gate test polynomials, the input store
  /// and the outputs on the home device; complete before the first operation.
  void setup() {
    const std::size_t L = plan_.locations, D = plan_.devices;
    index_.resize(L);
    pools_.resize(D);
    tests_.resize(D);
    for (std::size_t l = 0; l < L; ++l) {
      const auto& v = plan_.index[l];
      index_[l] = Buffer::from_host(be(l), v.data(), v.size() * sizeof(std::uint32_t), {});
    }
    backend::with_torus(shape_.torus_bits, [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> test(shape_.N, static_cast<T>(mu_)), false_ct(words_, T{0});
      false_ct[shape_.big_dim()] = static_cast<T>(T{0} - static_cast<T>(mu_));
      for (std::size_t d = 0; d < D; ++d) {
        pools_[d] = Buffer(be(d), plan_.pool_slots[d] * ct_bytes_, {});
        be(d).copy_from_host_async(pools_[d].as<void>(), false_ct.data(), ct_bytes_, {});
        tests_[d] = Buffer::from_host(be(d), test.data(), test.size() * sizeof(T), {});
        be(d).synchronize({});
      }
    });
    Backend& home = be(plan_.home);
    store_ = Buffer(home, x_.circuit.num_input_bits() * ct_bytes_, {});
    std::size_t at = 0;
    for (std::size_t p = 0; p < x_.inputs.size(); ++p) {
      const cggi::LweBatch& in = x_.inputs[p];
      const std::size_t bytes = x_.circuit.inputs()[p].nbits() * ct_bytes_;
      if (in.count)
        backend::copy_between_devices(home, store_.as<char>() + at, {}, *in.words->backend(),
                                      in.words->as<void>(), in.stream, bytes);
      at += bytes;
    }
    outputs_ = Buffer(home, x_.circuit.out_lits().size() * ct_bytes_, {});
    for (std::size_t l = 0; l < L; ++l) be(l).synchronize({});
    host_ = std::make_unique<HostStore>(be(0), plan_.host_slots * ct_bytes_);
  }

  void wait(const Op& op, Backend& b, Stream s, const Events& events) {
    for (std::uint32_t d : op.deps) b.wait_event(s, events.at(d));
  }

  void issue(const Op& op, const Streams& streams, const Events& events) {
    Backend& b = be(op.loc);
    const Stream st = streams.at(op.loc, op.stream);
    switch (op.kind) {
      case OpKind::group:
        wait(op, b, st, events);
        group(op, b, st);
        break;
      case OpKind::fetch:
        fetch(op, streams, events);
        break;
      case OpKind::spill:
      case OpKind::restore: {
        wait(op, b, st, events);
        char* pool = pools_[op.loc].as<char>();
        char* host = host_->data();
        for (std::size_t i = 0; i < op.slots.size(); ++i) {
          char* dev = pool + op.slots[i] * ct_bytes_;
          char* h = host + op.host[i] * ct_bytes_;
          if (op.kind == OpKind::spill)
            b.copy_to_host_async(h, dev, ct_bytes_, st);
          else
            b.copy_from_host_async(dev, h, ct_bytes_, st);
        }
        break;
      }
    }
  }

  /// Gather the operands, the linear step, key switch and blind rotation of the whole batch,
  /// then the results into their pool slots. MUX: s + a - 1/8 and (NOT s) + b - 1/8 side by
  /// side, one bootstrap of both, their sum + 1/8 (cggi::Context::mux, word for word). Three
  /// inputs: ca a + cb b, then + cc c (cggi::Context::maj and xor3, word for word).
  void group(const Op& op, Backend& b, Stream st) {
    auto& ops = b.cggi();
    const std::size_t m = op.count, n2 = op.form.mux ? 2 * m : m, dim = shape_.big_dim();
    void* pool = pools_[op.loc].as<void>();
    Buffer a(b, n2 * ct_bytes_, st), bb(b, n2 * ct_bytes_, st);
    ops.gather_async(a.as<void>(), nullptr, pool, idx(op.loc, op.a), dim, n2, shape_, st);
    ops.gather_async(bb.as<void>(), nullptr, pool, idx(op.loc, op.b), dim, n2, shape_, st);
    const Form f = op.form.mux ? Form{1, 1, -1} : op.form;
    ops.linear_async(a.as<void>(), a.as<void>(), bb.as<void>(), f.ca, f.cb, eighths(f.eighths), dim,
                     n2, shape_, st);
    if (f.cc) {
      ops.gather_async(bb.as<void>(), nullptr, pool, idx(op.loc, op.c), dim, m, shape_, st);
      ops.linear_async(a.as<void>(), a.as<void>(), bb.as<void>(), 1, f.cc, 0, dim, m, shape_, st);
    }
    const Location& loc = x_.locations[op.loc];
    if (x_.options.skip_bootstrap) {
      b.copy_async(bb.as<void>(), a.as<void>(), n2 * ct_bytes_, st);
    } else {
      Buffer small(b, n2 * (shape_.n + 1) * shape_.word_bytes(), st);
      ops.key_switch_async(small.as<void>(), a.as<void>(), loc.key->ksk.as<void>(), n2, shape_, st);
      ops.blind_rotate_extract_async(bb.as<void>(), small.as<void>(), tests_[op.loc].as<void>(), 0,
                                     n2, shape_, loc.ctx->key_view(*loc.key), st);
    }
    void* result = bb.as<void>();
    if (op.form.mux) {
      ops.linear_async(a.as<void>(), bb.as<void>(), bb.as<char>() + m * ct_bytes_, 1, 1, eighths(1),
                       dim, m, shape_, st);
      result = a.as<void>();
    }
    ops.gather_async(pool, idx(op.loc, op.out), result, nullptr, dim, m, shape_, st);
  }

  /// Ciphertexts from a pool or the input store into a pool or the outputs: one gather on the
  /// same device, else a gather into a batch there, one copy, a gather into place here.
  void fetch(const Op& op, const Streams& streams, const Events& events) {
    Backend& dst = be(op.loc);
    Backend& src = be(op.src_loc);
    const Stream st = streams.at(op.loc, op.stream);
    const Stream sst = streams.at(op.src_loc, op.src_stream);
    const std::size_t dim = shape_.big_dim(), bytes = op.count * ct_bytes_;
    void* to = op.to_outputs ? outputs_.as<void>() : pools_[op.loc].as<void>();
    const void* from = op.from_inputs ? store_.as<void>() : pools_[op.src_loc].as<void>();
    wait(op, src, sst, events);
    if (op.src_loc == op.loc) {
      dst.cggi().gather_async(to, idx(op.loc, op.out), from, idx(op.loc, op.a), dim, op.count,
                              shape_, st);
      return;
    }
    Buffer send(src, bytes, sst);
    src.cggi().gather_async(send.as<void>(), nullptr, from, idx(op.src_loc, op.a), dim, op.count,
                            shape_, sst);
    // The copy runs on the target's incoming stream, not on `st`: the source's stream waits for
    // the copy (before `send` may be freed), so a copy queued behind the target's bootstraps
    // would hold the source device's next batches back as well.
    const Stream in = streams.incoming(op.loc);
    Buffer recv(dst, bytes, in);
    backend::copy_between_devices(dst, recv.as<void>(), in, src, send.as<void>(), sst, bytes);
    backend::wait_for(dst, st, in);
    // The target's stream waits too, before writing the slots (not before the copy): a CPU
    // source's waits are no-ops (its work is done when enqueued), and the slots' earlier
    // readers may be on the target's other streams.
    wait(op, dst, st, events);
    dst.cggi().gather_async(to, idx(op.loc, op.out), recv.as<void>(), nullptr, dim, op.count,
                            shape_, st);
    recv.release_on(st);
  }

  /// One batch per output port (copies of the outputs' pieces), on the home device.
  std::vector<cggi::LweBatch> split_outputs() {
    const cggi::Context& home = *x_.locations[plan_.home].ctx;
    Backend& b = be(plan_.home);
    std::vector<cggi::LweBatch> out;
    std::size_t at = 0;
    for (const Port& p : x_.circuit.outputs()) {
      cggi::LweBatch c;
      c.params_id = home.params_id();
      c.key_id = x_.key_id;
      c.torus_bits = shape_.torus_bits;
      c.dim = shape_.big_dim();
      c.count = p.nbits();
      c.words = std::make_shared<Buffer>(b, c.count * ct_bytes_, Stream{});
      b.copy_async(c.words->as<void>(), outputs_.as<char>() + at, c.count * ct_bytes_, {});
      at += c.count * ct_bytes_;
      out.push_back(std::move(c));
    }
    b.synchronize({});
    return out;
  }

  const ExecuteInput& x_;
  const Plan& plan_;
  const backend::CggiShape& shape_;
  const std::size_t words_, ct_bytes_;
  const std::uint64_t mu_;
  std::vector<Backend*> bes_;
  std::vector<Buffer> index_, pools_, tests_;
  Buffer store_, outputs_;
  std::unique_ptr<HostStore> host_;
};

}  // namespace

std::vector<cggi::LweBatch> execute(const ExecuteInput& x, RunStats& stats) {
  Executor e(x);
  return e.run(stats);
}

}  // namespace ember::circuit::detail
