// serve/httplib_include.h — the one way Ferrite includes cpp-httplib: its
// configuration macros first, the same in every translation unit, so its
// inline code has one definition (src/serve/http_server.cc and the tests).
//
// The listen backlog is NOT set here: Debian's cpp-httplib is a compiled
// library (libcpp-httplib.so) whose listen() uses its own build's backlog of
// 5, so a CPPHTTPLIB_LISTEN_BACKLOG defined here changes nothing.
// HttpServer::bind raises it to kListenBacklog on the bound socket instead
// (serve/http_server.cc).
#pragma once

#ifdef CPPHTTPLIB_VERSION
#error "include serve/httplib_include.h instead of <httplib.h>"
#endif
#include <httplib.h>
