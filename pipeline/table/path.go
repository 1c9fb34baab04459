package table

import (
	"fmt"
	"slices"
	"strings"
)

// SplitPath splits a dotted attribute path ("data.steps.ocr.status") into
// its names, rejecting an empty path or an empty name. Names are literal:
// nothing in them is read as a list index.
func SplitPath(path string) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty path", ErrInvalidUpdate)
	}
	parts := strings.Split(path, ".")
	if slices.Contains(parts, "") {
		return nil, fmt.Errorf("%w: path %q has an empty segment", ErrInvalidUpdate, path)
	}
	return parts, nil
}

// UpdatePaths checks a list of updates the way DynamoDB does (known kinds,
// valid paths, key attributes left alone, no two paths overlapping) and
// returns each update's path, split. Every driver applies these rules, so
// an update that works on one works on all.
func UpdatePaths(updates []Update) ([][]string, error) {
	out := make([][]string, 0, len(updates))
	for _, u := range updates {
		path, err := updatePath(u)
		if err != nil {
			return nil, err
		}
		parts, err := SplitPath(path)
		if err != nil {
			return nil, err
		}
		if parts[0] == AttrPK || parts[0] == AttrSK {
			return nil, fmt.Errorf("%w: cannot change key attribute %s", ErrInvalidUpdate, parts[0])
		}
		for _, prev := range out {
			if overlaps(prev, parts) {
				return nil, fmt.Errorf("%w: paths %q and %q overlap", ErrInvalidUpdate, strings.Join(prev, "."), path)
			}
		}
		out = append(out, parts)
	}
	return out, nil
}

func updatePath(u Update) (string, error) {
	switch x := u.(type) {
	case Set:
		return x.Path, nil
	case Add:
		return x.Path, nil
	case Remove:
		return x.Path, nil
	}
	return "", fmt.Errorf("%w: unknown update %T", ErrInvalidUpdate, u)
}

// overlaps reports whether one path equals or contains the other.
func overlaps(a, b []string) bool {
	n := min(len(a), len(b))
	return slices.Equal(a[:n], b[:n])
}
