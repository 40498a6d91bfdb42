// Package answer reads what an @playwright/mcp worker answers: Parse takes a
// tool call's result apart, Ingest and IngestDownloads take the files it
// links from the worker's output directory.
//
// It uses only the standard library and the root package: reading an answer
// (export does, from stored records) must not link the code that runs
// processes. It never touches SQLite: callers store what it returns.
// Everything here is untrusted input, largely controlled by the web pages
// the browser visits.
package answer
