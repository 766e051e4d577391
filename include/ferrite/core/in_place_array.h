// ferrite/core/in_place_array.h — a fixed-size array whose elements are
// constructed at their own index, in any order, by several threads.
//
// Contract: an `InPlaceArray<T>` owns `size()` constructed elements in one
// allocation, in index order; it is read like a vector (size, [], begin/end,
// front/back, span) and never resized. It is made by `results_in_place`
// (parallel_indices.h): each worker moves its result straight into the
// element's final place, so a phase's results are written once, into one
// array — not into per-index slots and then again into a vector (on a
// program of 100,000 plan nodes of about 1 KB each, that second array was
// 100 MB of fresh memory the kernel zeroed per compile; docs/performance.md,
// step 22). Copies copy every element; moves move the allocation.
//
// `InPlaceArray<T>::Building` is the array under construction: storage for
// `count` elements, none constructed; `construct(i, value)` constructs
// element i exactly once (different indices may be constructed concurrently:
// each writes only its own element and its own flag); `complete()` says
// whether every element is; `release() &&` hands the complete array over.
// A Building destroyed unreleased destroys exactly the elements it
// constructed and frees the storage.
//
// Hazards: constructing an index twice, or releasing an incomplete Building,
// is a programming error (asserted). Elements must not be read through the
// Building while other threads construct.
//
// Example:
//   InPlaceArray<PlanNode>::Building building(n);
//   building.construct(3, std::move(node));      // any order, any thread
//   if (building.complete()) InPlaceArray<PlanNode> nodes = std::move(building).release();
//   for (const PlanNode& node : nodes) use(node);
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace ferrite {

template <class T>
class InPlaceArray {
 public:
  class Building;

  InPlaceArray() noexcept = default;
  InPlaceArray(const InPlaceArray& other) {
    T* data = allocate(other.size_);
    size_t made = 0;
    try {
      for (; made < other.size_; ++made) std::construct_at(data + made, other.data_[made]);
    } catch (...) {
      std::destroy(data, data + made);
      if (data != nullptr) std::allocator<T>().deallocate(data, other.size_);
      throw;
    }
    data_ = data;
    size_ = other.size_;
  }
  InPlaceArray(InPlaceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  InPlaceArray& operator=(const InPlaceArray& other) {
    if (this != &other) {
      InPlaceArray copy(other);
      swap(copy);
    }
    return *this;
  }
  InPlaceArray& operator=(InPlaceArray&& other) noexcept {
    if (this != &other) {
      destroy();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~InPlaceArray() { destroy(); }

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const T& operator[](size_t i) const noexcept { return data_[i]; }
  T& operator[](size_t i) noexcept { return data_[i]; }
  const T* data() const noexcept { return data_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T& front() const noexcept { return data_[0]; }
  const T& back() const noexcept { return data_[size_ - 1]; }
  std::span<const T> span() const noexcept { return {data_, size_}; }
  operator std::span<const T>() const noexcept { return span(); }  // NOLINT: a view, like vector's

  void swap(InPlaceArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }
  friend bool operator==(const InPlaceArray& a, const InPlaceArray& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static T* allocate(size_t count) {
    return count == 0 ? nullptr : std::allocator<T>().allocate(count);
  }
  void destroy() noexcept {
    if (data_ == nullptr) return;
    std::destroy(data_, data_ + size_);
    std::allocator<T>().deallocate(data_, size_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  size_t size_ = 0;  // constructed elements; the allocation holds exactly these
};

template <class T>
class InPlaceArray<T>::Building {
 public:
  explicit Building(size_t count)
      : data_(InPlaceArray::allocate(count)), count_(count), built_(count, 0) {}
  Building(Building&&) = delete;
  Building(const Building&) = delete;
  Building& operator=(const Building&) = delete;
  ~Building() {
    if (data_ == nullptr) return;
    for (size_t i = 0; i < count_; ++i) {
      if (built_[i]) std::destroy_at(data_ + i);
    }
    std::allocator<T>().deallocate(data_, count_);  // non-null: count_ > 0
  }

  size_t size() const noexcept { return count_; }
  void construct(size_t i, T&& value) {
    assert(i < count_ && !built_[i]);
    std::construct_at(data_ + i, std::move(value));
    built_[i] = 1;
  }
  bool complete() const noexcept {
    return std::all_of(built_.begin(), built_.end(), [](uint8_t b) { return b != 0; });
  }
  // The first index not constructed (size() when complete).
  size_t first_missing() const noexcept {
    return static_cast<size_t>(std::find(built_.begin(), built_.end(), uint8_t{0}) -
                               built_.begin());
  }
  InPlaceArray release() && {
    assert(complete());
    InPlaceArray out;
    out.data_ = std::exchange(data_, nullptr);
    out.size_ = count_;
    return out;
  }

 private:
  T* data_;
  size_t count_;
  std::vector<uint8_t> built_;  // one byte per element: threads write distinct bytes
};

}  // namespace ferrite
