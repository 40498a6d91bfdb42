// Package buildinfo holds what the linker stamps into the binaries (-X in
// the Makefile). It imports nothing, so a binary that needs only its version
// (mcp-bridge) links nothing of the server for it.
package buildinfo

// Set by the linker: the release version, and the project directory whose
// node_modules holds the pinned @playwright/mcp, so that installed binaries
// find it from any working directory.
var (
	Version     = "dev"
	ProjectRoot = ""
)
