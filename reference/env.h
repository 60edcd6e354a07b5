// Settings read from the environment, checked.
#pragma once
#include <cstdlib>
#include <string>

#include "common.h"

namespace hl {

// A size in MB from the environment variable `name` (unset or empty: fallback_mb). Anything but a whole number of
// MB up to 2^40 is an error naming the variable: atoll read "-1" as a cache of 2^64 bytes and "8G" as 8 MB.
inline size_t env_megabytes(const char* name, size_t fallback_mb) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback_mb << 20;
  size_t mb = 0;
  for (const char* c = e; *c; ++c) {
    if (*c < '0' || *c > '9' || mb > (size_t(1) << 40) / 10)
      fail("{}='{}': give a size in MB, a whole number from 0 to 2^40", name, std::string(e).substr(0, 40));
    mb = mb * 10 + size_t(*c - '0');
  }
  return mb << 20;
}

// A switch from the environment variable `name`: unset or empty is false, "0" false, "1" true; anything else is an
// error naming the variable (a typo must not silently leave a measurement's setting as it was).
inline bool env_switch(const char* name) {
  const char* e = std::getenv(name);
  if (!e || !*e) return false;
  const std::string v(e);
  if (v == "0" || v == "1") return v == "1";
  fail("{}='{}': give 0 or 1", name, v.substr(0, 40));
}

}  // namespace hl
