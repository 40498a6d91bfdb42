// Package upstream owns the @playwright/mcp worker processes and the Chromium
// browser host they share, and parses what those workers write: tool-call
// results and the files they leave in their output directory.
//
// It must never touch SQLite: callers store what Parse and Ingest return.
// Everything a worker prints or writes is treated as untrusted input, since
// it is largely controlled by the web pages the browser visits.
//
// Process model: every process started here runs in its own process group
// (so a stop reaches its children too) and, on Linux, dies with the proxy
// (PR_SET_PDEATHSIG). A group is only signalled while its leader is known
// not to have been reaped, so a recycled pid can never be hit.
package upstream
