// DeviceSet (an ordered list of distinct devices of one kind) and the row partitions over it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ember/backend/backend.h"

namespace ember::dist {

using backend::Device;
using backend::DeviceKind;

/// An ordered list of distinct devices, all CPU devices or all GPUs. Position d in the list is
/// the device's rank in collectives.
class DeviceSet {
 public:
  /// Throws ParameterError for an empty list, a device named twice, or CPU devices mixed with
  /// GPUs. Does not open the devices (a Communicator does).
  explicit DeviceSet(std::vector<Device> devices);
  /// The same from names ("cuda:0", "cpu:2", ...); ParameterError for an unknown name.
  static DeviceSet parse(const std::vector<std::string>& names);

  std::size_t size() const { return devices_.size(); }
  const Device& operator[](std::size_t rank) const { return devices_[rank]; }
  const std::vector<Device>& devices() const { return devices_; }
  DeviceKind kind() const { return devices_.front().kind; }
  /// The rank of `d`; ParameterError when it is not in the set.
  std::size_t rank_of(const Device& d) const;
  /// "[cuda:0, cuda:1]".
  std::string str() const;

 private:
  std::vector<Device> devices_;
};

/// Rows [begin, end) of a limbs x N polynomial (contiguous words: the layout is limb-major).
struct RowRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
  bool operator==(const RowRange& o) const { return begin == o.begin && end == o.end; }
};

/// `parts` balanced contiguous ranges covering [0, rows): the first rows % parts ranges have one
/// row more. Throws ParameterError unless 1 <= parts <= rows (every part holds a row).
std::vector<RowRange> partition_rows(std::size_t rows, std::size_t parts);
/// partition_rows(rows, devices.size()).
std::vector<RowRange> partition_rows(std::size_t rows, const DeviceSet& devices);
/// Throws ParameterError unless `ranges` are `parts` non-empty ranges, each starting where the
/// previous one ends, from 0 to `rows`.
void check_partition(const std::vector<RowRange>& ranges, std::size_t rows, std::size_t parts);

}  // namespace ember::dist
