// Tests of the dist layer on CPU devices cpu:0..cpu:7: DeviceSet validation, row partitions, and
// every collective of the Communicator (copy exchange) against sums modulo each row's prime
// computed here on the host, for even and uneven row partitions and one to eight devices.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ember/core/errors.h"
#include "ember/core/numtheory.h"
#include "ember/dist/communicator.h"
#include "ember/ring/rns_poly.h"

namespace {

using ember::u32;
using ember::u64;
using namespace ember::dist;
using ember::ring::Form;
using ember::ring::RingContext;
using ember::ring::RnsBasis;
using ember::ring::RnsPoly;

Device cpu(int i) { return Device{DeviceKind::cpu, i}; }

DeviceSet cpus(std::size_t k) {
  std::vector<Device> d;
  for (std::size_t i = 0; i < k; ++i) d.push_back(cpu(static_cast<int>(i)));
  return DeviceSet(d);
}

struct Ring {
  std::shared_ptr<const RingContext> ctx;
  RnsBasis basis;
};

/// `rows` primes of 61 bits (the largest words the sums must carry) over N = 16.
Ring make_ring(std::size_t rows) {
  auto ctx = RingContext::create(16, ember::generate_ntt_primes(61, 16, rows));
  return {ctx, RnsBasis::all(ctx)};
}

/// Random reduced words for `basis` (limb-major); the first words of each row are q - 1.
std::vector<u64> random_words(const RnsBasis& basis, std::mt19937_64& rng) {
  std::vector<u64> w(basis.size() * basis.n());
  for (std::size_t r = 0; r < basis.size(); ++r)
    for (std::size_t i = 0; i < basis.n(); ++i)
      w[r * basis.n() + i] = i < 2 ? basis.prime(r) - 1 : rng() % basis.prime(r);
  return w;
}

/// The sum mod q of every input, row by row, computed with 128-bit integers.
std::vector<u64> host_sum(const RnsBasis& basis, const std::vector<std::vector<u64>>& in) {
  std::vector<u64> out(in[0].size());
  for (std::size_t r = 0; r < basis.size(); ++r)
    for (std::size_t i = 0; i < basis.n(); ++i) {
      unsigned __int128 s = 0;
      for (const auto& v : in) s += v[r * basis.n() + i];
      out[r * basis.n() + i] = static_cast<u64>(s % basis.prime(r));
    }
  return out;
}

std::vector<u64> rows_of(const std::vector<u64>& w, std::size_t n, RowRange r) {
  return std::vector<u64>(w.begin() + r.begin * n, w.begin() + r.end * n);
}

std::vector<RowRange> from_sizes(const std::vector<std::size_t>& sizes) {
  std::vector<RowRange> out;
  std::size_t at = 0;
  for (std::size_t s : sizes) {
    out.push_back({at, at + s});
    at += s;
  }
  return out;
}

TEST(DeviceSet, Validates) {
  EXPECT_THROW(DeviceSet({}), ember::ParameterError);
  EXPECT_THROW(DeviceSet({cpu(0), cpu(1), cpu(0)}), ember::ParameterError);
  EXPECT_THROW(DeviceSet({cpu(0), Device{DeviceKind::cuda, 0}}), ember::ParameterError);
  EXPECT_THROW(DeviceSet::parse({"cpu:1", "gpu:x"}), ember::ParameterError);
  const DeviceSet s = DeviceSet::parse({"cpu:2", "cpu", "cpu:1"});
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.rank_of(cpu(1)), 2u);
  EXPECT_EQ(s.str(), "[cpu:2, cpu, cpu:1]");
  EXPECT_THROW(s.rank_of(cpu(5)), ember::ParameterError);
}

TEST(PartitionRows, BalancedAndContiguous) {
  EXPECT_EQ(partition_rows(10, 4), from_sizes({3, 3, 2, 2}));
  EXPECT_EQ(partition_rows(8, 4), from_sizes({2, 2, 2, 2}));
  EXPECT_EQ(partition_rows(5, 1), from_sizes({5}));
  EXPECT_EQ(partition_rows(40, 3), from_sizes({14, 13, 13}));
  EXPECT_THROW(partition_rows(3, 4), ember::ParameterError);
  EXPECT_THROW(partition_rows(3, 0), ember::ParameterError);
  for (std::size_t rows = 1; rows < 20; ++rows)
    for (std::size_t parts = 1; parts <= rows; ++parts)
      EXPECT_NO_THROW(check_partition(partition_rows(rows, parts), rows, parts));
  EXPECT_THROW(check_partition(from_sizes({2, 0, 3}), 5, 3), ember::ParameterError);
  EXPECT_THROW(check_partition(from_sizes({2, 2}), 5, 2), ember::ParameterError);
  EXPECT_THROW(check_partition({{0, 2}, {3, 5}}, 5, 2), ember::ParameterError);
  EXPECT_THROW(check_partition(from_sizes({5}), 5, 2), ember::ParameterError);
}

struct Case {
  std::size_t devices;
  std::vector<std::size_t> sizes;  // rows of each part
};

class Collectives : public ::testing::TestWithParam<Case> {};

TEST_P(Collectives, MatchHostSums) {
  const Case c = GetParam();
  const auto ranges = from_sizes(c.sizes);
  const std::size_t rows = ranges.back().end, k = c.devices;
  const Ring ring = make_ring(rows);
  const std::size_t n = ring.basis.n();
  std::mt19937_64 rng(rows * 100 + k);
  Communicator comm(cpus(k));
  EXPECT_EQ(comm.exchange_name(), "copy");

  std::vector<std::vector<u64>> words;
  std::vector<RnsPoly> wholes;
  for (std::size_t d = 0; d < k; ++d) {
    words.push_back(random_words(ring.basis, rng));
    wholes.push_back(
        RnsPoly::from_host(ring.basis, Form::eval, comm.devices()[d], words[d].data()));
  }
  const auto sum = host_sum(ring.basis, words);

  // reduce_scatter: rank d holds rows r_d of the sum.
  const auto parts = comm.reduce_scatter(const_refs(wholes), ranges);
  for (std::size_t d = 0; d < k; ++d) {
    EXPECT_EQ(parts[d].device(), comm.devices()[d]);
    EXPECT_EQ(parts[d].form(), Form::eval);
    EXPECT_EQ(parts[d].to_host(), rows_of(sum, n, ranges[d])) << "rank " << d;
  }
  // all_gather of those parts: the whole sum everywhere.
  const auto gathered = comm.all_gather(const_refs(parts));
  for (std::size_t d = 0; d < k; ++d) {
    EXPECT_EQ(gathered[d].basis(), ring.basis);
    EXPECT_EQ(gathered[d].to_host(), sum) << "rank " << d;
  }
  // all_reduce in place.
  std::vector<RnsPoly> copies;
  for (const auto& w : wholes) copies.push_back(w.copy());
  comm.all_reduce(refs(copies));
  for (std::size_t d = 0; d < k; ++d) EXPECT_EQ(copies[d].to_host(), sum) << "rank " << d;
  // broadcast from the last rank.
  comm.broadcast(refs(wholes), k - 1);
  for (std::size_t d = 0; d < k; ++d) EXPECT_EQ(wholes[d].to_host(), words[k - 1]) << "rank " << d;
}

INSTANTIATE_TEST_SUITE_P(CpuDevices, Collectives,
                         ::testing::Values(Case{1, {5}}, Case{2, {3, 3}}, Case{2, {4, 1}},
                                           Case{3, {3, 2, 2}}, Case{4, {2, 2, 2, 2}},
                                           Case{4, {1, 3, 1, 2}}, Case{8, {1, 1, 1, 1, 1, 1, 1, 1}},
                                           Case{8, {2, 1, 1, 1, 1, 1, 1, 2}}));

TEST(Collectives, BalancedPartitionByDefault) {
  const Ring ring = make_ring(7);
  std::mt19937_64 rng(1);
  Communicator comm(cpus(3));
  std::vector<std::vector<u64>> words;
  std::vector<RnsPoly> wholes;
  for (std::size_t d = 0; d < 3; ++d) {
    words.push_back(random_words(ring.basis, rng));
    wholes.push_back(
        RnsPoly::from_host(ring.basis, Form::coeff, comm.devices()[d], words[d].data()));
  }
  const auto parts = comm.reduce_scatter(const_refs(wholes));
  const auto sum = host_sum(ring.basis, words);
  const auto ranges = partition_rows(7, 3);
  for (std::size_t d = 0; d < 3; ++d) {
    EXPECT_EQ(parts[d].limbs(), ranges[d].size());
    EXPECT_EQ(parts[d].form(), Form::coeff);
    EXPECT_EQ(parts[d].to_host(), rows_of(sum, 16, ranges[d]));
  }
}

TEST(Collectives, TakeRowsThenGather) {
  const Ring ring = make_ring(6);
  std::mt19937_64 rng(2);
  const auto w = random_words(ring.basis, rng);
  const RnsPoly whole = RnsPoly::from_host(ring.basis, Form::eval, cpu(0), w.data());
  Communicator comm(cpus(4));
  const auto ranges = from_sizes({1, 2, 2, 1});
  std::vector<RnsPoly> parts;
  for (std::size_t d = 0; d < 4; ++d) parts.push_back(take_rows(whole, ranges[d], cpu(int(d))));
  EXPECT_EQ(parts[2].to_host(), rows_of(w, 16, ranges[2]));
  for (const auto& g : comm.all_gather(const_refs(parts))) EXPECT_EQ(g.to_host(), w);
  EXPECT_THROW(take_rows(whole, {4, 7}, cpu(1)), ember::ParameterError);
  EXPECT_THROW(take_rows(whole, {2, 2}, cpu(1)), ember::ParameterError);
}

TEST(Collectives, RefuseMismatchedOperands) {
  const Ring ring = make_ring(4);
  const Ring other = make_ring(4);
  Communicator comm(cpus(2));
  std::vector<RnsPoly> polys;
  polys.push_back(RnsPoly::zeros(ring.basis, Form::eval, cpu(0)));
  polys.push_back(RnsPoly::zeros(ring.basis, Form::eval, cpu(1)));
  // One polynomial per rank, each on its rank's device.
  std::vector<RnsPoly> one;
  one.push_back(polys[0].copy());
  EXPECT_THROW(comm.all_reduce(refs(one)), ember::ParameterError);
  std::vector<RnsPoly> swapped;
  swapped.push_back(polys[1].copy());
  swapped.push_back(polys[0].copy());
  EXPECT_THROW(comm.all_reduce(refs(swapped)), ember::MismatchError);
  // One basis and form.
  std::vector<RnsPoly> forms;
  forms.push_back(polys[0].copy());
  forms.push_back(RnsPoly::zeros(ring.basis, Form::coeff, cpu(1)));
  EXPECT_THROW(comm.broadcast(refs(forms), 0), ember::MismatchError);
  std::vector<RnsPoly> rings;
  rings.push_back(polys[0].copy());
  rings.push_back(RnsPoly::zeros(other.basis, Form::eval, cpu(1)));
  EXPECT_THROW(comm.reduce_scatter(const_refs(rings)), ember::MismatchError);
  EXPECT_THROW(comm.broadcast(refs(polys), 2), ember::ParameterError);
  EXPECT_THROW(comm.reduce_scatter(const_refs(polys), from_sizes({3, 2})), ember::ParameterError);
  // Parts that repeat a prime do not make a whole polynomial.
  std::vector<RnsPoly> parts;
  parts.push_back(take_rows(polys[0], {0, 2}, cpu(0)));
  parts.push_back(take_rows(polys[0], {1, 3}, cpu(1)));
  EXPECT_THROW(comm.all_gather(const_refs(parts)), ember::ParameterError);
  // Outputs whose basis is not the parts' rows.
  std::vector<RnsPoly> outs;
  outs.push_back(take_rows(polys[0], {0, 2}, cpu(0)));
  outs.push_back(take_rows(polys[0], {1, 3}, cpu(1)));
  EXPECT_THROW(comm.reduce_scatter_into_async(const_refs(polys), refs(outs)), ember::MismatchError);
}

TEST(Communicator, ExchangeChoice) {
  EXPECT_THROW(Communicator(cpus(2), Exchange::nccl), ember::DeviceError);
  Communicator c(cpus(2), Exchange::copy);
  EXPECT_FALSE(c.uses_nccl());
  EXPECT_EQ(c.size(), 2u);
  // Sums over more than 8 devices could overflow 64 bits.
  Communicator nine(cpus(9));
  const Ring ring = make_ring(9);
  std::vector<RnsPoly> polys;
  for (int d = 0; d < 9; ++d) polys.push_back(RnsPoly::zeros(ring.basis, Form::eval, cpu(d)));
  EXPECT_THROW(nine.all_reduce(refs(polys)), ember::ParameterError);
  EXPECT_NO_THROW(nine.broadcast(refs(polys), 3));
#if !defined(EMBER_WITH_CUDA)
  EXPECT_THROW(Communicator(DeviceSet({Device{DeviceKind::cuda, 0}})), ember::DeviceError);
#endif
}

}  // namespace
