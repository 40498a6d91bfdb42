//go:build !linux

package proxyserver

import (
	"context"
	"log/slog"
)

// dataDirClaim is a no-op outside Linux: finding a dead server's leftovers
// by their environment needs /proc.
type dataDirClaim struct{}

// claimDataDir does nothing outside Linux.
func claimDataDir(context.Context, string, pidRecord, *slog.Logger) (*dataDirClaim, error) {
	return &dataDirClaim{}, nil
}

func (*dataDirClaim) release() error { return nil }
