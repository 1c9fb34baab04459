// Package fileopen opens files as package os does, without registering
// them with the Go runtime's network poller. os.Open tries that for every
// file: for a regular file it costs two fcntl to make the descriptor
// non-blocking, an epoll_ctl that fails, and two more fcntl to undo it.
// The blob store and the sniffer open a dozen small files per document,
// and on many small documents those calls were three quarters of all the
// fcntl the process made. Regular files and directories never block in
// the poller's sense, so nothing is lost.
package fileopen

import "os"

// Open opens name for reading, as os.Open does.
func Open(name string) (*os.File, error) { return OpenFile(name, os.O_RDONLY, 0) }
