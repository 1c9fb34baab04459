package dirblob

// SetSyncHook replaces the filesystem sync, so that tests can count syncs.
func SetSyncHook(s *Store, sync func(root string) error) { s.syncFS = sync }

// Written is the count of the store's completed Puts, the count a sync
// beginning now would cover.
func Written(s *Store) uint64 { return s.written.Load() }

// SyncFilesystem is the store's real filesystem sync.
var SyncFilesystem = syncFilesystem
