package steps

import (
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// commandFilesKey adds to k the content of the files a command stage's
// command line names, so that editing a stage's script runs it again:
// every argument (the program included) that names a regular file inside
// the pipeline file's folder dir, where the command runs, relative
// arguments taken from there. Programs and files elsewhere (python3 on
// the PATH, a system library) are the machine's, not the pipeline's, and
// are left out, as are files the script reads without naming them on the
// command line: a stage that depends on those says `cache: false`.
func commandFilesKey(k *pipeline.CacheKey, st pipeline.Stage, dir string) {
	if st.Run.Kind() != pipeline.RunCommand || dir == "" {
		return
	}
	for _, arg := range st.Run.Command {
		path := arg
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if rel, err := filepath.Rel(dir, path); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if sum, ok := fileSums.of(path); ok {
			k.Add("file/"+arg, sum)
		}
	}
}

// fileSums remembers the SHA-256 of the files command lines name by path,
// size and modification time: a stage's key is computed for every batch,
// and a script does not change within a run.
var fileSums = &fileSumCache{sums: map[fileStamp][]byte{}}

type fileSumCache struct {
	mu   sync.Mutex
	sums map[fileStamp][]byte
}

type fileStamp struct {
	path string
	size int64
	mod  time.Time
}

// of returns the SHA-256 of the regular file at path; ok is false for
// anything else (a folder, a file that is not there or cannot be read:
// the command itself then says what is wrong).
func (c *fileSumCache) of(path string) (sum []byte, ok bool) {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil, false
	}
	stamp := fileStamp{path: path, size: info.Size(), mod: info.ModTime()}
	c.mu.Lock()
	sum, ok = c.sums[stamp]
	c.mu.Unlock()
	if ok {
		return sum, true
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, false
	}
	sum = h.Sum(nil)
	c.mu.Lock()
	c.sums[stamp] = sum
	c.mu.Unlock()
	return sum, true
}
