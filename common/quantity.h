// Kubernetes resource quantities ("500m", "2Ti", "1.5Gi", "8", "1e3"), parsed exactly.
//
//   ASSIGN_OR_RETURN(Quantity mem, Quantity::Parse("1.5Gi"));
//   mem.Value();       // 1610612736 (bytes)
//   Quantity::Parse("250m")->MilliValue();  // 250
//
// A quantity is held as a count of thousandths ("milli-units"), which is the precision
// Kubernetes itself keeps: anything finer is rounded up to 1m, as the API server does. Parsing
// uses 128-bit arithmetic, so "1.5Gi" is exact and "0.1" is exactly 100m. The count is 128 bits
// wide and bounded so that the whole units fit in 64 bits (up to 2^63 - 1 units: 8 EiB of
// memory); beyond that is OutOfRange. It was once a 64-bit count of thousandths, which capped
// every quantity at ~9.2 peta-units (8 PiB): a 5,000-node p5 cluster's memory quota (2 TiB a
// node, twice over) was rejected as "too large".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace phalanx {

class Quantity {
 public:
  // How the quantity was written; decides the suffix family used by ToString().
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;

  // Parses the Kubernetes quantity grammar: an optional sign, a decimal number
  // (digits, optionally with a fraction), then a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal
  // suffix (m, k, M, G, T, P, E) or a decimal exponent (e3, E-2). Returns InvalidArgument naming
  // the problem ("empty", "no digits", "unknown suffix") for anything else.
  static absl::StatusOr<Quantity> Parse(std::string_view text);

  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);
  // `value` whole units; every int64 is one.
  static Quantity FromValue(int64_t value, Format format = Format::kDecimalSI);

  // The quantity in thousandths, exact, when they fit in 64 bits: every quantity up to ~9.2
  // peta-units, so every cpu amount the API server takes; nullopt beyond.
  std::optional<int64_t> MilliValue() const;
  // The quantity in whole units, rounded up (towards +infinity), as Kubernetes' Value() does.
  int64_t Value() const;
  // The quantity as a double (for weights and ratios, not for counting).
  double ToDouble() const { return static_cast<double>(milli_) / 1000.0; }
  bool IsZero() const { return milli_ == 0; }
  bool IsNegative() const { return milli_ < 0; }
  // No thousandths: "2", "1Gi", "3k"; not "1500m".
  bool IsWhole() const { return milli_ % 1000 == 0; }
  Format format() const { return format_; }

  // Canonical text in the quantity's own suffix family: "1536Mi", "500m", "8", "2k", "1e3".
  std::string ToString() const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.milli_ == b.milli_; }
  friend auto operator<=>(const Quantity& a, const Quantity& b) { return a.milli_ <=> b.milli_; }

 private:
  Quantity(__int128 milli, Format format) : milli_(milli), format_(format) {}

  __int128 milli_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace phalanx
