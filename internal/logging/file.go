package logging

import (
	"fmt"
	"os"
	"sync"
)

// FileMode is the mode a log file is created with: the log may name the
// pages sessions visit, so it is the owner's alone.
const FileMode = 0o600

// File is a log file that can be reopened at its path, for logrotate: after
// the file was renamed, Reopen sends the next lines to a new file at the
// path while the renamed one keeps what it has.
//
// Each Write goes whole to one file, and the slog handlers write one record
// per Write, so no line is split between the two files or lost in between.
type File struct {
	path string

	mu sync.Mutex
	f  *os.File
}

// OpenFile opens path for appending, creating it with FileMode. Its
// directory must exist: a log going nowhere would be found out too late.
func OpenFile(path string) (*File, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	return &File{path: path, f: f}, nil
}

func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	return f, nil
}

// Path is the path the file was opened at.
func (l *File) Path() string { return l.path }

func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

// Reopen opens the path afresh and closes the file written so far. If the
// path cannot be opened, the lines keep going to the old file.
func (l *File) Reopen() error {
	f, err := open(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.f
	l.f = f
	l.mu.Unlock()
	if err := old.Close(); err != nil {
		return fmt.Errorf("close the previous log file: %w", err)
	}
	return nil
}

// Close closes the file; later writes fail.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
