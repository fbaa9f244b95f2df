// Package fsmonitor is a file-system monitor for one working tree: a
// process that watches every directory of the tree (Linux inotify) and
// answers, over a unix socket, which paths may have changed since it
// started. It is an accelerator and never a source of truth: its answer is
// a candidate set ("these paths may differ from the base; no other path
// does"), which the caller reads and compares exactly as a full scan
// would. It knows no git; the caller hands it a seed and the files beside
// the tree whose changes matter.
//
// # Serving
//
// Serve takes a lock file in the state directory (one monitor per tree; a
// second one returns ErrRunning at once), registers a watch on every
// directory of the tree first, then calls Seed (the caller's full scan) and
// starts the candidate set with its paths, then adds every path an event
// names: created, modified, attribute change, closed after writing,
// deleted, moved from or to. A new directory gets watches and stands for
// everything under it. It returns when the tree's top or the state
// directory is removed, on Stop, after Idle without a query, on its
// context, or on any event it cannot account for (a queue overflow, a
// watch limit): then the socket is gone and every client falls back.
//
// # Soundness: the cookie
//
// A query must see every event caused before it. For each query the
// monitor creates a cookie file in the state directory (which it watches
// on the same inotify queue) and answers only after that file's event has
// been read: events of one queue arrive in order, so every change that
// finished before the query arrived has been added. The wait is bounded;
// past it the query fails and the caller falls back.
//
// # Socket
//
// The socket is in Linux's abstract namespace, named after the state
// directory, so a crashed monitor leaves no socket file behind and long
// temporary paths do not hit the 108-byte limit of a socket path. Both
// ends check the peer's user id.
package fsmonitor
