// Package upstream owns the @playwright/mcp worker processes and the Chromium
// browser host they share. What those workers answer and write is read by
// package answer, which links none of this process code.
//
// It must never touch SQLite. Everything a worker prints is treated as
// untrusted input, since it is largely controlled by the web pages the
// browser visits.
//
// Process model: every process started here runs in its own process group
// (so a stop reaches its children too) and, on Linux, dies with the proxy
// (PR_SET_PDEATHSIG). A group is only signalled while its leader is known
// not to have been reaped, so a recycled pid can never be hit. Every process
// a Host starts also carries InstanceEnv in its environment (inherited by its
// descendants), so that a later proxy-server can end exactly the leftovers of
// one that was killed, and nothing else.
//
// Supervision: a Host stops the workers of a shared browser that dies (their
// Done is the session layer's signal to restart them) and relaunches the
// browser; Spawn retries failed starts and sits behind a circuit breaker.
package upstream
