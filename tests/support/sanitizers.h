// tests/support/sanitizers.h — whether this test binary runs under AddressSanitizer.
//
// Contract: FERRITE_UNDER_ASAN is 1 in a build with -fsanitize=address, for
// g++ (which defines __SANITIZE_ADDRESS__) and clang (which only answers
// __has_feature(address_sanitizer)), else 0. Tests that measure RSS or
// replace operator new skip themselves under it.
//
// Example:
//   if (FERRITE_UNDER_ASAN) GTEST_SKIP() << "ASan shadow memory inflates RSS";
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define FERRITE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FERRITE_UNDER_ASAN 1
#endif
#endif
#ifndef FERRITE_UNDER_ASAN
#define FERRITE_UNDER_ASAN 0
#endif
