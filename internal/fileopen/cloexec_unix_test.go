//go:build unix

package fileopen_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/docpipe/docpipe/internal/fileopen"
)

// A child process (pdftotext, tesseract) must not inherit the files
// docpipe has open.
func TestDescriptorsCloseOnExec(t *testing.T) {
	t.Parallel()
	f, err := fileopen.OpenFile(filepath.Join(t.TempDir(), "a"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFD, 0)
	if errno != 0 || flags&syscall.FD_CLOEXEC == 0 {
		t.Errorf("F_GETFD = %#x, %v; want FD_CLOEXEC", flags, errno)
	}
}
