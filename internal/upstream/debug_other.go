//go:build !linux

package upstream

// findsDebugPort: groupDebugEndpoint can find a per-session browser's port.
const findsDebugPort = false

// groupDebugEndpoint needs /proc: elsewhere a per-session browser's CDP
// port is not found, and its sessions have no live view.
func groupDebugEndpoint(int) string { return "" }
