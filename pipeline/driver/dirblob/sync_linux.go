package dirblob

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/docpipe/docpipe/internal/fileopen"
)

// filesystemSyncer returns what writes back every dirty page and inode of
// the filesystem holding root in one syncfs(2): cheaper than an fsync per
// file and per directory when a flush covers many objects. It keeps root
// open for as long as the store lives: syncfs reports a write-back error
// only on descriptors opened before the error happened, so a descriptor
// opened for each sync would miss a failure of the write-back the kernel
// ran in the background since the last one.
func filesystemSyncer(root string) (func(string) error, error) {
	d, err := fileopen.Open(root)
	if err != nil {
		return nil, err
	}
	return func(string) error {
		err := unix.Syncfs(int(d.Fd()))
		runtime.KeepAlive(d)
		return err
	}, nil
}
