package proxyserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"
)

// pidFileName is the pid file proxy-server keeps in its data directory (the
// directory of PROXY_DATABASE_PATH) while it runs.
const pidFileName = "proxy-server.pid"

// ErrDataDirInUse means another live proxy-server holds the data directory:
// two servers on one database would suspend each other's sessions and
// reap each other's workers.
var ErrDataDirInUse = errors.New("another proxy-server is using this data directory")

// pidRecord is the pid file's content (JSON).
type pidRecord struct {
	PID int `json:"pid"`
	// StartTime is the process's start in clock ticks after boot (field 22
	// of /proc/PID/stat): with PID it names one process, even after the
	// pid was reused by another.
	StartTime uint64 `json:"start_time"`
	// Instance is the marker value every child of that server carries
	// (upstream.InstanceEnv), so its leftovers can be found.
	Instance string `json:"instance"`
	// StartedAt is for people reading the file and error messages.
	StartedAt time.Time `json:"started_at"`
}

// newInstanceID returns a random id for this server's children's marker.
func newInstanceID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("instance id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// claimDataDirOf claims the directory of dbPath for this run (see
// claimDataDir) under a new instance id, which the caller gives the host.
// release removes the pid file; call it once everything has stopped.
func claimDataDirOf(ctx context.Context, dbPath string, log *slog.Logger) (instance string, release func(), err error) {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return "", nil, fmt.Errorf("data directory of %s: %w", dbPath, err)
	}
	if instance, err = newInstanceID(); err != nil {
		return "", nil, err
	}
	c, err := claimDataDir(ctx, filepath.Dir(abs), instance, log)
	if err != nil {
		return "", nil, err
	}
	return instance, func() {
		if err := c.release(); err != nil {
			log.Warn("removing the pid file", "err", err)
		}
	}, nil
}
