// The index's questions over neardupd's HTTP listener (metrics.queries; docs/operations.md):
//   POST /v1/lookup     body: an input record (Content-Type application/json, docs/records.md)
//                       or a page's HTML (any other Content-Type, which is the page's own):
//                       200 {"id", "url", "neardup": {...}} — what it would be tagged, nothing
//                       inserted; 400 {"error", "detail"} for a record that is not a page
//   GET /v1/pages/{id}  200 {"page": {...}, "cluster": {...}}; 404 {"error": "not_found"}
//   GET /v1/explain?id=ID[&with=ID]  200 the object of `neardup show --explain --json`;
//                       404 {"error": "not_found", "detail"} (an id without a live page, or a
//                       first page that matched nothing without `with`); 400 without `id`
// Store failures answer 500 {"error": "store", "detail"}. Pages are processed under the config
// in effect (reloads included); the body limits are input.max_record_bytes at start.
#pragma once

#include "daemon/daemon.h"
#include "ops/metrics_server.h"
#include "ops/reload.h"

namespace neardup::daemon {

// Cluster members listed by GET /v1/pages/{id} (size counts them all).
inline constexpr std::size_t kQueryMaxMembers = 1000;

// The request bodies the listener receives at once, in bodies of the largest size
// (input.max_record_bytes, as read at start): as many as its two threads answer at once.
// Requests past it are answered 503 (ops/metrics_server.h).
inline constexpr std::size_t kQueryBodyBudgetRecords = 2;

// Handlers answering from `daemon`'s index; `config` and `daemon` must outlive them.
ops::QueryHandlers query_handlers(Daemon& daemon, const ops::ConfigHolder& config);

}  // namespace neardup::daemon
