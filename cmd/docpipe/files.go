package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// notProcessed is a file named on the command line, or met in a folder,
// that docpipe cannot read as a document, and why.
type notProcessed struct {
	Path   string
	Reason string
}

// statusNotProcessed is the status reported for such a file.
const statusNotProcessed = "not processed"

// collectFiles expands the command line into regular files: directories
// are walked recursively, hidden files and directories (such as the state
// home .docpipe) are skipped, and the result is sorted and de-duplicated.
// Anything else it meets — pipes, sockets, devices, unreadable files,
// broken links — is returned with the reason, never passed over in
// silence. A named path that does not exist is an error.
func collectFiles(args []string) ([]string, []notProcessed, error) {
	if len(args) == 0 {
		return nil, nil, fmt.Errorf("no files or directories given")
	}
	seen := map[string]bool{}
	var files []string
	var skipped []notProcessed
	first := func(p string) bool {
		abs, err := filepath.Abs(p)
		if err != nil || seen[abs] {
			return false
		}
		seen[abs] = true
		return true
	}
	consider := func(p string) {
		if !first(p) {
			return
		}
		if reason := unprocessable(p); reason != "" {
			skipped = append(skipped, notProcessed{Path: p, Reason: reason})
			return
		}
		files = append(files, p)
	}
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil {
			if _, lerr := os.Lstat(arg); lerr == nil {
				consider(arg) // a broken symbolic link: reported, not fatal
				continue
			}
			return nil, nil, err
		}
		if !info.IsDir() {
			consider(arg)
			continue
		}
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == arg {
					return err
				}
				if first(p) {
					skipped = append(skipped, notProcessed{Path: p, Reason: describeErr(err)})
				}
				return nil
			}
			if p != arg && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() {
				consider(p)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Strings(files)
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Path < skipped[j].Path })
	return files, skipped, nil
}

// unprocessable returns why p cannot be read as a document, or "" when it
// can: it must be (or link to) a regular file this process may open.
func unprocessable(p string) string {
	info, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "broken symbolic link"
		}
		return describeErr(err)
	}
	if info.IsDir() {
		return "symbolic link to a directory (not followed)"
	}
	if kind := fileKind(info.Mode()); kind != "" {
		return "not a regular file (" + kind + ")"
	}
	f, err := os.Open(p)
	if err != nil {
		return describeErr(err)
	}
	f.Close()
	return ""
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "irregular file"
}

func describeErr(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
