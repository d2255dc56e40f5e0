// The Boost.Beast implementation of HttpServer (http_server.h): HTTP/1.1 with keep-alive, one
// io_context run by `ServerOptions::threads` worker threads, each connection on its own strand.
//
//   auto server = phalanx::http::NewBeastServer({.address = "127.0.0.1", .port = 10251});
//   server->Handle("/scheduler/", extender_handler);   // prefix route
//   RETURN_IF_ERROR(server->Start());
//
// What a client sees (details in docs/http-and-metrics.md):
// - no route: 404; a handler that throws: 500, logged, and the server keeps serving;
// - unparseable request line or headers: 400; headers over 8 KiB: 431; a body over
//   max_body_bytes: 413 (checked against Content-Length before the body is read). Each of
//   these closes the connection after the response, draining what the client still sends for
//   up to two seconds so that it reads the status instead of a reset;
// - `Expect: 100-continue` gets its interim 100 response before the body is read;
// - a connection that sends nothing for idle_timeout_ms, or takes longer than that to send a
//   request or read a response, is closed without a response.
// Stop() closes the listening socket and every connection waiting for a request; a request
// already being received, handled or answered finishes (its response says Connection: close)
// unless the client takes longer than five seconds (or idle_timeout_ms if shorter) to finish
// sending it. Call Stop() from outside the handlers: from a handler it can only begin the
// shutdown, and a later Stop() or the destructor joins the threads.
#pragma once

#include <memory>

#include "common/http/http_server.h"

namespace phalanx::http {

std::unique_ptr<HttpServer> NewBeastServer(ServerOptions options);

}  // namespace phalanx::http
