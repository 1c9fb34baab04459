// Package blob defines the bulk-data store every blob driver (directory, S3)
// implements. Segment text, analysis JSON, graphs and summaries live here,
// never in the table or the state machine payload.
package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrNotFound is returned when no object exists under a key.
var ErrNotFound = errors.New("blob: not found")

// ErrInvalidKey is returned for keys that could escape or confuse a store.
var ErrInvalidKey = errors.New("blob: invalid key")

// TooLargeError is returned by GetBytes for an object over its size bound.
type TooLargeError struct {
	Key string
	Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("blob: %s is larger than %d bytes", e.Key, e.Max)
}

// Info describes a stored object.
type Info struct {
	Key      string
	Size     int64
	Modified time.Time
}

// Store is a flat key → bytes store with "/"-separated keys.
// Put replaces an object atomically: a reader sees the old or the new bytes,
// never a mix.
type Store interface {
	Put(ctx context.Context, key string, r io.Reader) error
	// Get returns a reader the caller must close.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Head(ctx context.Context, key string) (Info, error)
	// List returns every object whose key starts with prefix, in key order.
	List(ctx context.Context, prefix string) ([]Info, error)
	// Delete removes an object; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// Syncer is implemented by stores whose Put leaves bytes in a volatile
// cache (a directory store writes without an fsync per object): Flush makes
// every object Put before the call durable. Callers flush once before they
// record, in the table, that a step's objects exist. Stores whose Put is
// durable when it returns (S3) need not implement it.
type Syncer interface {
	Flush(ctx context.Context) error
}

// LocalFiler is a Store whose objects are files on this machine. A step
// that needs its input as a file (a sniffer, an extractor, poppler) reads
// the object in place instead of copying it first; it must neither change
// nor remove the file.
type LocalFiler interface {
	// LocalFile returns the file holding key and the object's Info, or
	// ErrNotFound.
	LocalFile(ctx context.Context, key string) (string, Info, error)
}

// Flush makes the objects Put on s so far durable when s is a Syncer, and
// does nothing otherwise.
func Flush(ctx context.Context, s Store) error {
	if sy, ok := s.(Syncer); ok {
		return sy.Flush(ctx)
	}
	return nil
}

// ValidateKey rejects empty keys, absolute paths, empty segments ("a//b",
// trailing "/"), "." and ".." segments, backslashes and NUL bytes.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if strings.HasPrefix(key, "/") {
		return fmt.Errorf("%w: %q is absolute", ErrInvalidKey, key)
	}
	if strings.ContainsAny(key, "\\\x00") {
		return fmt.Errorf("%w: %q contains a backslash or NUL", ErrInvalidKey, key)
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: %q has an empty segment", ErrInvalidKey, key)
		case ".", "..":
			return fmt.Errorf("%w: %q has a %q segment", ErrInvalidKey, key, seg)
		}
	}
	return nil
}

// ValidatePrefix accepts "" (everything) or a prefix that is a valid key
// optionally followed by "/".
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return ValidateKey(strings.TrimSuffix(prefix, "/"))
}

// PutBytes stores b under key.
func PutBytes(ctx context.Context, s Store, key string, b []byte) error {
	return s.Put(ctx, key, bytes.NewReader(b))
}

// GetBytes reads a whole object, refusing objects larger than max bytes
// (max <= 0 means no limit).
func GetBytes(ctx context.Context, s Store, key string, max int64) ([]byte, error) {
	rc, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var r io.Reader = rc
	if max > 0 {
		r = io.LimitReader(rc, max+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("blob: read %s: %w", key, err)
	}
	if max > 0 && int64(len(b)) > max {
		return nil, &TooLargeError{Key: key, Max: max}
	}
	return b, nil
}
