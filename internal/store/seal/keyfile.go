package seal

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// KeyFile returns the key kept in the file at path, creating the file
// (KeySize random bytes as hex and a newline, mode 0600) when there is
// none. A file that group or others may read is refused: whoever reads it
// opens every saved state and profile.
func KeyFile(path string) ([]byte, error) {
	key, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := createKeyFile(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("seal: create key file %s: %w", path, err)
	}
	// Ours, or the one another process created first: both read it.
	return readKeyFile(path)
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("seal: key file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("seal: key file: %w", err)
	}
	// Windows reports no group or other permission bits to check.
	if perm := fi.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return nil, fmt.Errorf("seal: key file %s may be read by others (mode %04o): chmod 600 %s", path, perm, path)
	}
	// A key is at most a line; a bigger file is not one.
	raw, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return nil, fmt.Errorf("seal: key file %s: %w", path, err)
	}
	key, err := ParseKey(string(raw))
	if err != nil {
		return nil, fmt.Errorf("seal: key file %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new key under a temporary name, then links it to
// path, which fails if path exists: two processes starting on the same
// database at once keep one key, and neither ever reads a half-written
// file.
func createKeyFile(path string) error {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*") // O_EXCL, 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path)
}
