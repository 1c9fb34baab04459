package dirblob

import (
	"golang.org/x/sys/unix"

	"github.com/docpipe/docpipe/internal/fileopen"
)

// syncFilesystem writes back every dirty page and inode of the filesystem
// holding root in one syncfs(2): cheaper than an fsync per file and per
// directory when a flush covers many objects.
func syncFilesystem(root string) error {
	d, err := fileopen.Open(root)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
