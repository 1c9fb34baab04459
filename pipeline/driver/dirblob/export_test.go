package dirblob

// SetSyncHook replaces the filesystem sync, so that tests can count syncs.
func SetSyncHook(s *Store, sync func(root string) error) { s.syncFS = sync }

// Written is the count of the store's completed Puts, the count a sync
// beginning now would cover.
func Written(s *Store) uint64 { return s.written.Load() }

// SyncFilesystem is a store's real filesystem sync, on a descriptor of
// its own.
func SyncFilesystem(root string) error {
	sync, err := filesystemSyncer(root)
	if err != nil {
		return err
	}
	return sync(root)
}
