// serve/httplib_include.h — the one way Ferrite includes cpp-httplib: its
// configuration macros first, the same in every translation unit, so its
// inline code has one definition (src/serve/http_server.cc and the tests).
//
// CPPHTTPLIB_LISTEN_BACKLOG: cpp-httplib listens with a backlog of 5 by
// default. When the accepting thread is slow to run (the CPU busy with a
// step), a burst of clients connecting at once overflows it; the kernel
// drops their handshakes and they retry after the 1 s SYN timeout, so a
// request waits about a second for its first token while slots are free.
#pragma once

#ifdef CPPHTTPLIB_VERSION
#error "include serve/httplib_include.h instead of <httplib.h>"
#endif
#define CPPHTTPLIB_LISTEN_BACKLOG 1024
#include <httplib.h>
