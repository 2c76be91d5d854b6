// SPDX-License-Identifier: Apache-2.0
// Reference-counted interning: each distinct value stored once, freed with its last user,
// so a ring that keeps evicting old samples does not keep their strings forever.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lockwatch::store {

/// std::hash of the characters, for std::string and std::string_view alike.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// With a transparent `Hash` (one that declares `is_transparent`, like StringHash below),
/// `acquire` takes anything T compares with - a string_view for std::string - and builds a T
/// only for a value not seen before: most lines of a dump were seen in the dump before it.
template <class T, class Hash = std::hash<T>>
class InternPool {
 public:
  using Id = std::uint32_t;

  /// The id of `value`, adding it or taking another reference.
  template <class Key = T>
  Id acquire(const Key& value) {
    if (auto it = index_.find(value); it != index_.end()) {
      ++entries_[it->second].refs;
      return it->second;
    }
    const Id id = free_.empty() ? static_cast<Id>(entries_.size()) : free_.back();
    if (free_.empty()) entries_.emplace_back();
    else free_.pop_back();
    const auto inserted = index_.emplace(T(value), id).first;
    entries_[id] = Entry{&inserted->first, 1};
    ++live_;
    return id;
  }

  /// Takes another reference to a value the caller holds one to already: no hashing.
  void add_ref(Id id) { ++entries_[id].refs; }

  /// Drops one reference; returns true when that was the last (the value is gone).
  bool release(Id id) {
    if (--entries_[id].refs > 0) return false;
    index_.erase(index_.find(*entries_[id].value));
    entries_[id].value = nullptr;
    free_.push_back(id);
    --live_;
    return true;
  }

  const T& get(Id id) const { return *entries_[id].value; }
  /// A hint that `id` is about to be used: its entry is fetched into the cache, not read.
  void prefetch(Id id) const {
    if (id < entries_.size()) __builtin_prefetch(&entries_[id]);
  }
  /// Whether release(id) would drop the last reference.
  bool last_ref(Id id) const { return entries_[id].refs == 1; }
  std::size_t size() const noexcept { return live_; }

 private:
  struct Entry {
    const T* value = nullptr;  // the index's own key: node-based, so it never moves
    std::uint32_t refs = 0;
  };
  std::deque<Entry> entries_;  // by id
  std::unordered_map<T, Id, Hash, std::equal_to<>> index_;  // each value stored once, as a key here
  std::vector<Id> free_;
  std::size_t live_ = 0;
};

}  // namespace lockwatch::store
