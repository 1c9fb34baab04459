//go:build unix && !linux

package dirblob

import "golang.org/x/sys/unix"

// filesystemSyncer returns what writes back every dirty buffer with
// sync(2): systems other than Linux have no syncfs, and sync covers every
// filesystem.
func filesystemSyncer(string) (func(string) error, error) {
	return func(string) error {
		unix.Sync()
		return nil
	}, nil
}
