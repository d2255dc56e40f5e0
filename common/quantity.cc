#include "common/quantity.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace phalanx {
namespace {

using int128 = __int128;

// Whole units must fit in 64 bits (Value()).
constexpr int128 kMaxMilli = int128{std::numeric_limits<int64_t>::max()} * 1000;
// Beyond this many significant digits the 128-bit intermediate could overflow; no real quantity
// comes close, so such text is rejected rather than approximated.
constexpr int kMaxSignificantDigits = 30;

absl::Status Invalid(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid quantity \"", absl::string_view(text.data(), text.size()),
                   "\": ", absl::string_view(why.data(), why.size())));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// absl::StrCat takes absl::int128, not the compiler's __int128.
std::string ToDecimal(int128 v) {
  if (v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max()) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  const bool negative = v < 0;
  std::string digits;
  while (v != 0) {
    const int d = static_cast<int>(v % 10);
    digits.push_back(static_cast<char>('0' + (negative ? -d : d)));
    v /= 10;
  }
  if (negative) digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

int128 Pow10(int n) {
  int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

}  // namespace

absl::StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return Invalid(text, "empty");
  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') {
    negative = text[i] == '-';
    ++i;
  }
  // Mantissa as an integer `digits` with `fraction_digits` of them after the decimal point.
  int128 digits = 0;
  int significant = 0;
  int fraction_digits = 0;
  bool any_digit = false;
  bool seen_point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (IsDigit(c)) {
      any_digit = true;
      if (digits != 0 || c != '0') ++significant;
      if (significant > kMaxSignificantDigits) return Invalid(text, "too many digits");
      digits = digits * 10 + (c - '0');
      if (seen_point) ++fraction_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return Invalid(text, "no digits");

  // Suffix: the value is digits * num / den * 10^-fraction_digits.
  std::string_view suffix = text.substr(i);
  int128 num = 1;
  int den_power = 0;  // the divisor is 10^den_power
  Format format = Format::kDecimalSI;
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    format = Format::kBinarySI;
    int shift = 0;
    switch (suffix[0]) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      case 'P': shift = 50; break;
      case 'E': shift = 60; break;
      default: return Invalid(text, "unknown suffix");
    }
    num = int128{1} << shift;
  } else if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    format = Format::kDecimalExponent;
    size_t j = 1;
    bool negative_exponent = false;
    if (suffix[j] == '+' || suffix[j] == '-') {
      negative_exponent = suffix[j] == '-';
      ++j;
    }
    if (j >= suffix.size()) return Invalid(text, "exponent has no digits");
    int exponent = 0;
    for (; j < suffix.size(); ++j) {
      if (!IsDigit(suffix[j])) return Invalid(text, "exponent is not an integer");
      exponent = exponent * 10 + (suffix[j] - '0');
      if (exponent > 30) return Invalid(text, "exponent out of range");
    }
    if (negative_exponent) {
      den_power = exponent;
    } else {
      num = Pow10(exponent);
    }
  } else if (suffix.size() == 1) {
    int power = 0;
    switch (suffix[0]) {
      case 'm': power = -3; break;
      case 'k': power = 3; break;
      case 'M': power = 6; break;
      case 'G': power = 9; break;
      case 'T': power = 12; break;
      case 'P': power = 15; break;
      case 'E': power = 18; break;
      case 'e': return Invalid(text, "exponent has no digits");
      default: return Invalid(text, "unknown suffix");
    }
    if (power < 0) {
      den_power = -power;
    } else {
      num = Pow10(power);
    }
  } else {
    return Invalid(text, "unknown suffix");
  }

  // milli = ceil(digits * num * 1000 / (den * 10^fraction_digits)), all in 128 bits.
  // Leading zeros of a fraction are not significant digits, so fraction_digits is unbounded
  // (".000...01"): the divisor is kept as a power of ten until it is known to fit.
  den_power += fraction_digits;
  int128 scaled = digits * 1000;
  // Guard the multiplication by num: both factors are bounded, but check rather than trust.
  if (num != 0 && scaled > std::numeric_limits<int128>::max() / num) {
    return absl::OutOfRangeError(absl::StrCat("quantity \"", absl::string_view(text.data(), text.size()),
                                              "\" is too large"));
  }
  scaled *= num;
  int128 milli;
  if (den_power > 38) {
    // 10^39 is above every int128, so above `scaled`: anything non-zero rounds up to 1m.
    milli = scaled != 0 ? 1 : 0;
  } else {
    int128 den = Pow10(den_power);
    milli = scaled / den + (scaled % den != 0 ? 1 : 0);
  }
  if (milli > kMaxMilli) {
    return absl::OutOfRangeError(absl::StrCat("quantity \"", absl::string_view(text.data(), text.size()),
                                              "\" is too large"));
  }
  return Quantity(negative ? -milli : milli, format);
}

Quantity Quantity::FromMilli(int64_t milli, Format format) { return Quantity(milli, format); }

Quantity Quantity::FromValue(int64_t value, Format format) {
  return Quantity(int128{value} * 1000, format);
}

std::optional<int64_t> Quantity::MilliValue() const {
  if (milli_ < std::numeric_limits<int64_t>::min() || milli_ > std::numeric_limits<int64_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int64_t>(milli_);
}

int64_t Quantity::Value() const {
  int128 whole = milli_ / 1000;
  if (milli_ % 1000 > 0) ++whole;
  return static_cast<int64_t>(whole);  // in range: Parse and the constructors bound milli_
}

std::string Quantity::ToString() const {
  if (milli_ % 1000 != 0) return ToDecimal(milli_) + "m";
  int64_t value = static_cast<int64_t>(milli_ / 1000);
  if (value == 0) return "0";
  switch (format_) {
    case Format::kBinarySI: {
      static constexpr const char* kSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      int k = 0;
      while (k < 6 && value % 1024 == 0) {
        value /= 1024;
        ++k;
      }
      return absl::StrCat(value, kSuffixes[k]);
    }
    case Format::kDecimalExponent: {
      int exponent = 0;
      while (value % 1000 == 0) {
        value /= 1000;
        exponent += 3;
      }
      return exponent == 0 ? absl::StrCat(value) : absl::StrCat(value, "e", exponent);
    }
    case Format::kDecimalSI: {
      static constexpr const char* kSuffixes[] = {"", "k", "M", "G", "T", "P", "E"};
      int k = 0;
      while (k < 6 && value % 1000 == 0) {
        value /= 1000;
        ++k;
      }
      return absl::StrCat(value, kSuffixes[k]);
    }
  }
  return absl::StrCat(value);
}

}  // namespace phalanx
