// Shared immutable values for the decoded API objects (kube/objects.h). An informer's cache
// repeats the same things thousands of times: label keys, namespaces, node names, phases, the
// owning job, and whole lists (a DaemonSet's tolerations, a job's per-pod requests). The decoder
// interns strings in a StringPool and hands identical lists out as one Shared value, so every
// pod points at one copy instead of owning its own, and decoding a repeated value costs a
// lookup instead of allocations.
//
//   kube::StringPool pool;
//   kube::InternedString a = pool.Intern("nvidia.com/gpu");
//   kube::InternedString b = pool.Intern("nvidia.com/gpu");   // the same storage as `a`
//   if (a == "nvidia.com/gpu") ...;                           // compares like a string
//   std::string copy = a;                                     // converts to std::string
//   pod.node_name = "node-7";                                 // plain strings assign, unpooled
//
//   kube::SharedList<kube::Toleration> tolerations = std::move(vector);
//   for (const kube::Toleration& t : tolerations) ...;        // reads like a const vector
//   const phalanx::ResourceList& r = pod.requests;            // Shared<C> converts to const C&
//
// An InternedString is 8 bytes (a pointer; null is ""), reference-counted and immutable, so
// copies are cheap and any thread may read, copy or drop one. A StringPool is not thread-safe:
// each Decoder owns one. The pool drops strings nobody else holds any more once it has grown
// to twice what was live at its last sweep, so a cache of churning objects (job names, node
// names) keeps the pool bounded by what is live. SharedList<T> is one refcounted block of
// elements; Shared<C> is a std::shared_ptr<const C> that reads like the container itself.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "fmt/format.h"

namespace kube {

// An immutable string shared by reference count; compares, hashes, prints and converts like the
// text it holds (see the file comment).
class InternedString {
 public:
  InternedString() = default;
  // Any string-like value (std::string, std::string_view, a literal): an unpooled copy.
  template <typename T>
    requires(std::is_convertible_v<const T&, std::string_view> &&
             !std::is_same_v<std::remove_cvref_t<T>, InternedString>)
  InternedString(const T& text)  // NOLINT(google-explicit-constructor): a string type
      : rep_(New(std::string(std::string_view(text)))) {}
  InternedString(std::string&& text)  // NOLINT(google-explicit-constructor)
      : rep_(New(std::move(text))) {}

  InternedString(const InternedString& other) : rep_(other.rep_) { Ref(rep_); }
  InternedString(InternedString&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  InternedString& operator=(const InternedString& other) {
    Ref(other.rep_);
    Unref(std::exchange(rep_, other.rep_));
    return *this;
  }
  InternedString& operator=(InternedString&& other) noexcept {
    if (this != &other) Unref(std::exchange(rep_, std::exchange(other.rep_, nullptr)));
    return *this;
  }
  ~InternedString() { Unref(rep_); }

  const std::string& str() const { return rep_ == nullptr ? Empty() : rep_->text; }
  std::string_view view() const { return str(); }
  const char* data() const { return str().data(); }
  size_t size() const { return rep_ == nullptr ? 0 : rep_->text.size(); }
  bool empty() const { return size() == 0; }
  void clear() { Unref(std::exchange(rep_, nullptr)); }

  // So that an InternedString goes wherever a string is expected.
  operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)
  operator std::string_view() const { return str(); }    // NOLINT(google-explicit-constructor)
  operator absl::string_view() const {                   // NOLINT(google-explicit-constructor)
    return absl::string_view(data(), size());
  }

  friend bool operator==(const InternedString& a, const InternedString& b) {
    return a.rep_ == b.rep_ || a.view() == b.view();
  }
  template <typename T>
    requires std::is_convertible_v<const T&, std::string_view>
  friend bool operator==(const InternedString& a, const T& b) {
    return a.view() == std::string_view(b);
  }
  friend auto operator<=>(const InternedString& a, const InternedString& b) {
    return a.view() <=> b.view();
  }
  template <typename T>
    requires std::is_convertible_v<const T&, std::string_view>
  friend auto operator<=>(const InternedString& a, const T& b) {
    return a.view() <=> std::string_view(b);
  }
  friend std::ostream& operator<<(std::ostream& os, const InternedString& s) {
    return os << s.str();
  }
  template <typename H>
  friend H AbslHashValue(H h, const InternedString& s) {
    return H::combine(std::move(h), absl::string_view(s.data(), s.size()));
  }

 private:
  friend class StringPool;

  struct Rep {
    std::atomic<uint32_t> refs;
    std::string text;
  };

  static const std::string& Empty() {
    static const std::string* const kEmpty = new std::string();
    return *kEmpty;
  }
  static Rep* New(std::string text) {
    return text.empty() ? nullptr : new Rep{{1}, std::move(text)};
  }
  static void Ref(Rep* rep) {
    if (rep != nullptr) rep->refs.fetch_add(1, std::memory_order_relaxed);
  }
  static void Unref(Rep* rep) {
    if (rep != nullptr && rep->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rep;
  }
  // Takes over one reference the caller already counted.
  static InternedString Adopt(Rep* rep) {
    InternedString s;
    s.rep_ = rep;
    return s;
  }

  Rep* rep_ = nullptr;
};

// Hands out one InternedString per distinct text. Not thread-safe.
class StringPool {
 public:
  StringPool() = default;
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  ~StringPool() {
    for (Rep* rep : reps_) InternedString::Unref(rep);
  }

  InternedString Intern(std::string_view text) {
    if (text.empty()) return InternedString();
    // Objects of one list repeat their neighbours' texts (label keys, the namespace, the owner,
    // tolerations): a small direct-mapped cache of recent strings, keyed by a hash of the length
    // and two bytes, answers most lookups from memory that is already in cache.
    Rep*& recent = recent_[RecentSlot(text)];
    if (recent != nullptr && recent->text == text) {
      InternedString::Ref(recent);
      return InternedString::Adopt(recent);
    }
    auto it = reps_.find(text);
    if (it != reps_.end()) {
      recent = *it;
      InternedString::Ref(*it);
      return InternedString::Adopt(*it);
    }
    // One reference for the pool, one for the caller.
    Rep* rep = new Rep{{2}, std::string(text)};
    reps_.insert(rep);
    InternedString s = InternedString::Adopt(rep);
    if (reps_.size() >= sweep_at_) {
      Sweep();
    } else {
      recent = rep;
    }
    return s;
  }

  // Distinct strings held (live or not yet swept).
  size_t size() const { return reps_.size(); }

  // Drops every string only the pool still holds. Safe while other threads hold, copy or drop
  // InternedStrings: a count of 1 means no handle exists anywhere else, and only the pool can
  // make a new one.
  void Sweep() {
    recent_.fill(nullptr);
    absl::erase_if(reps_, [](Rep* rep) {
      if (rep->refs.load(std::memory_order_acquire) != 1) return false;
      delete rep;
      return true;
    });
    sweep_at_ = std::max(kMinSweep, 2 * reps_.size());
  }

 private:
  using Rep = InternedString::Rep;
  static constexpr size_t kMinSweep = 4096;

  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return absl::Hash<absl::string_view>()(absl::string_view(s.data(), s.size()));
    }
    size_t operator()(const Rep* rep) const { return (*this)(rep->text); }
  };
  struct Eq {
    using is_transparent = void;
    static std::string_view View(std::string_view s) { return s; }
    static std::string_view View(const Rep* rep) { return rep->text; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) == View(b);
    }
  };

  // The length and the first and last eight bytes, mixed: cheap, and different for the texts
  // that differ only at one end (ranks "1" and "11", node names, job names).
  static size_t RecentSlot(std::string_view text) {
    const size_t n = text.size();
    uint64_t head = 0, tail = 0;
    if (n >= 8) {
      std::memcpy(&head, text.data(), 8);
      std::memcpy(&tail, text.data() + n - 8, 8);
    } else {
      for (size_t i = 0; i < n; ++i) head = head << 8 | static_cast<unsigned char>(text[i]);
    }
    uint64_t h = (n * 0x9E3779B97F4A7C15ull) ^ (head * 0xC2B2AE3D27D4EB4Full) ^
                 (tail * 0x165667B19E3779F9ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return static_cast<size_t>(h >> (64 - kRecentBits));
  }

  static constexpr int kRecentBits = 10;
  static constexpr size_t kRecent = size_t{1} << kRecentBits;
  absl::flat_hash_set<Rep*, Hash, Eq> reps_;
  std::array<Rep*, kRecent> recent_{};
  size_t sweep_at_ = kMinSweep;
};

// An immutable list shared between objects: one allocation holding a reference count and the
// elements, 8 bytes per holder. Reads like a const std::vector<T> (iteration, size, []). Empty
// is a null pointer.
template <typename T>
class SharedList {
 public:
  using value_type = T;
  using const_iterator = const T*;
  using iterator = const T*;
  using size_type = size_t;

  SharedList() = default;
  SharedList(std::vector<T> items)  // NOLINT(google-explicit-constructor): reads like one
      : block_(Block::Make(items.begin(), items.end())) {}
  // Moves the items of [first, last) in.
  template <typename It>
  SharedList(It first, It last) : block_(Block::Make(first, last)) {}
  SharedList(std::initializer_list<T> items) : SharedList(std::vector<T>(items)) {}
  SharedList(const SharedList& other) : block_(other.block_) { Block::Ref(block_); }
  SharedList(SharedList&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  SharedList& operator=(const SharedList& other) {
    Block::Ref(other.block_);
    Block::Unref(std::exchange(block_, other.block_));
    return *this;
  }
  SharedList& operator=(SharedList&& other) noexcept {
    if (this != &other) Block::Unref(std::exchange(block_, std::exchange(other.block_, nullptr)));
    return *this;
  }
  ~SharedList() { Block::Unref(block_); }

  const T* begin() const { return block_ == nullptr ? nullptr : block_->items(); }
  const T* end() const { return begin() + size(); }
  size_t size() const { return block_ == nullptr ? 0 : block_->size; }
  bool empty() const { return block_ == nullptr; }
  const T& operator[](size_t i) const { return block_->items()[i]; }
  const T& front() const { return (*this)[0]; }
  const T& back() const { return (*this)[size() - 1]; }
  std::vector<T> ToVector() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SharedList& a, const SharedList& b) {
    return a.block_ == b.block_ || std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  struct Block {
    std::atomic<uint32_t> refs;
    uint32_t size;

    static constexpr size_t kItemsOffset =
        (sizeof(Block) + alignof(T) - 1) / alignof(T) * alignof(T);
    T* items() { return reinterpret_cast<T*>(reinterpret_cast<char*>(this) + kItemsOffset); }

    // Moves the items in; null for none.
    template <typename It>
    static Block* Make(It first, It last) {
      const size_t n = static_cast<size_t>(std::distance(first, last));
      if (n == 0) return nullptr;
      void* memory = ::operator new(kItemsOffset + n * sizeof(T));
      Block* block = new (memory) Block{{1}, static_cast<uint32_t>(n)};
      T* out = block->items();
      for (; first != last; ++first) new (out++) T(std::move(*first));
      return block;
    }
    static void Ref(Block* block) {
      if (block != nullptr) block->refs.fetch_add(1, std::memory_order_relaxed);
    }
    static void Unref(Block* block) {
      if (block == nullptr || block->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      for (uint32_t i = 0; i < block->size; ++i) block->items()[i].~T();
      block->~Block();
      ::operator delete(block);
    }
  };

  Block* block_ = nullptr;
};

// An immutable container shared between objects (a resource list), read like a const C
// (iteration, size, find, at, contains) and converting to const C&. Empty is a null pointer.
template <typename C>
class Shared {
 public:
  using value_type = typename C::value_type;
  using const_iterator = typename C::const_iterator;
  using iterator = const_iterator;
  using size_type = typename C::size_type;

  Shared() = default;
  Shared(C value)  // NOLINT(google-explicit-constructor): a container goes where one is read
      : ptr_(value.empty() ? nullptr : std::make_shared<const C>(std::move(value))) {}
  Shared(std::initializer_list<value_type> values) : Shared(C(values)) {}

  const C& get() const { return ptr_ != nullptr ? *ptr_ : Empty(); }
  operator const C&() const { return get(); }  // NOLINT(google-explicit-constructor)

  const_iterator begin() const { return get().begin(); }
  const_iterator end() const { return get().end(); }
  size_type size() const { return get().size(); }
  bool empty() const { return ptr_ == nullptr || ptr_->empty(); }
  template <typename K>
  decltype(auto) at(const K& key) const {
    return get().at(key);
  }
  template <typename K>
  auto find(const K& key) const {
    return get().find(key);
  }
  template <typename K>
  bool contains(const K& key) const {
    return get().find(key) != get().end();
  }
  template <typename K>
  size_type count(const K& key) const {
    return get().count(key);
  }

  friend bool operator==(const Shared& a, const Shared& b) {
    return a.ptr_ == b.ptr_ || a.get() == b.get();
  }
  friend bool operator==(const Shared& a, const C& b) { return a.get() == b; }

 private:
  static const C& Empty() {
    static const C* const kEmpty = new C();
    return *kEmpty;
  }

  std::shared_ptr<const C> ptr_;
};

}  // namespace kube

template <>
struct fmt::formatter<kube::InternedString> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const kube::InternedString& s, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(s.view(), ctx);
  }
};
