package dirblob

// SetSyncHook replaces the filesystem sync, so that tests can count syncs.
func SetSyncHook(s *Store, sync func(root string) error) { s.syncFS = sync }
