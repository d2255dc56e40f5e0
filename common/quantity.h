// Kubernetes resource quantities ("500m", "2Ti", "1.5Gi", "8", "1e3"), parsed exactly.
//
//   ASSIGN_OR_RETURN(Quantity mem, Quantity::Parse("1.5Gi"));
//   mem.Value();       // 1610612736 (bytes)
//   Quantity::Parse("250m")->MilliValue();  // 250
//
// A quantity is held as a signed 64-bit count of thousandths ("milli-units"), which is the
// precision Kubernetes itself keeps: anything finer is rounded up to 1m, as the API server does.
// Parsing uses 128-bit arithmetic, so "1.5Gi" is exact and "0.1" is exactly 100m; a value whose
// milli-units do not fit in 64 bits (about 9.2 peta-units) is OutOfRange.
#pragma once

#include <cstdint>
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
  // `value` whole units; OutOfRange when its thousandths do not fit in 64 bits.
  static absl::StatusOr<Quantity> FromValue(int64_t value, Format format = Format::kDecimalSI);

  // The quantity in thousandths, exact.
  int64_t MilliValue() const { return milli_; }
  // The quantity in whole units, rounded up (towards +infinity), as Kubernetes' Value() does.
  int64_t Value() const;
  bool IsZero() const { return milli_ == 0; }
  bool IsNegative() const { return milli_ < 0; }
  Format format() const { return format_; }

  // Canonical text in the quantity's own suffix family: "1536Mi", "500m", "8", "2k", "1e3".
  std::string ToString() const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.milli_ == b.milli_; }
  friend auto operator<=>(const Quantity& a, const Quantity& b) { return a.milli_ <=> b.milli_; }

 private:
  Quantity(int64_t milli, Format format) : milli_(milli), format_(format) {}

  int64_t milli_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace phalanx
