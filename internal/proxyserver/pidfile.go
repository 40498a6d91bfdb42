package proxyserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
	// TempDir is the directory under os.TempDir() that server made for
	// everything its children write (newTempDir): removed with the
	// leftovers, it takes whatever a SIGKILL left no one to remove.
	TempDir string `json:"temp_dir,omitempty"`
	// StartedAt is for people reading the file and error messages.
	StartedAt time.Time `json:"started_at"`
}

// tempDirPrefix starts the name of every server's temp directory; nothing
// else is ever removed as a dead server's.
const tempDirPrefix = "pwproxy-"

// newTempDir makes this server's temp directory, short enough that
// Chromium's sockets fit below it (upstream's limit is 38 bytes for the
// directory the host is given; /tmp/pwproxy-NNNNNNNNNN is 23).
func newTempDir() (string, error) {
	dir, err := os.MkdirTemp("", tempDirPrefix+"*")
	if err != nil {
		return "", fmt.Errorf("temp directory: %w", err)
	}
	return dir, nil
}

// removeDeadTempDir removes the temp directory a dead server's pid file
// names, once that server's processes are gone. A path that is not one a
// server makes (a hand-edited pid file, say) is left alone.
func removeDeadTempDir(dir string, log *slog.Logger) {
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || !strings.HasPrefix(filepath.Base(dir), tempDirPrefix) {
		log.Warn("not removing the temp directory a pid file names: not one a proxy-server makes", "dir", dir)
		return
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		log.Warn("previous proxy-server's temp directory", "dir", dir, "err", err)
		return
	case !fi.IsDir():
		log.Warn("not removing the temp directory a pid file names: not a directory", "dir", dir)
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		log.Warn("removing a previous proxy-server's temp directory", "dir", dir, "err", err)
		return
	}
	log.Info("removed a previous proxy-server's temp directory", "dir", dir)
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
// claimDataDir) under a new instance id, which the caller gives the host,
// with tempDir (newTempDir) as this run's. release removes the pid file;
// call it once everything has stopped.
func claimDataDirOf(ctx context.Context, dbPath, tempDir string, log *slog.Logger) (instance string, release func(), err error) {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return "", nil, fmt.Errorf("data directory of %s: %w", dbPath, err)
	}
	if instance, err = newInstanceID(); err != nil {
		return "", nil, err
	}
	c, err := claimDataDir(ctx, filepath.Dir(abs), pidRecord{Instance: instance, TempDir: tempDir}, log)
	if err != nil {
		return "", nil, err
	}
	return instance, func() {
		if err := c.release(); err != nil {
			log.Warn("removing the pid file", "err", err)
		}
	}, nil
}
