package pdfbounds

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// checkPredictors looks through the file's bytes for the /Columns and
// /Colors of predictor parameters: readers allocate a row of Columns ×
// Colors samples before reading a byte of the stream. Parameters inside
// compressed object streams are out of its sight.
func checkPredictors(r io.ReaderAt, size int64) error {
	const chunk = 1 << 20
	const overlap = 64 // longer than a key and its number
	buf := make([]byte, chunk+overlap)
	for off := int64(0); off < size; off += chunk {
		n, err := r.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return fmt.Errorf("pdf: reading: %w", err)
		}
		data := buf[:n]
		for _, p := range []struct {
			key   string
			limit int64
		}{{"/Columns", MaxColumns}, {"/Colors", MaxColors}} {
			if v, ok := largest(data, p.key); ok && v > p.limit {
				return fmt.Errorf("pdf: a stream's predictor declares %s %d (at most %d)", p.key, v, p.limit)
			}
		}
	}
	return nil
}

// largest returns the largest integer that follows key in data.
func largest(data []byte, key string) (int64, bool) {
	var top int64
	found := false
	for {
		i := bytes.Index(data, []byte(key))
		if i < 0 {
			return top, found
		}
		data = data[i+len(key):]
		j := 0
		for j < len(data) && isSpace(data[j]) {
			j++
		}
		k := j
		for k < len(data) && data[k] >= '0' && data[k] <= '9' {
			k++
		}
		if k == j || k < len(data) && !isSpace(data[k]) && !isDelim(data[k]) {
			continue // not a number, or a name that only starts with key
		}
		v, err := strconv.ParseInt(string(data[j:k]), 10, 64)
		if err != nil {
			v = 1<<63 - 1 // too long for an int64: over any limit
		}
		top, found = max(top, v), true
	}
}
