package sqlitetable

import (
	"database/sql"
	"sync"
	"time"
)

// SQLite's own checkpoints run inside the commit that pushes the WAL past
// 1,000 pages: that commit copies the pages into the database and fsyncs
// the WAL and the database file, and with one writer every transaction
// waits behind it. On a real disk that was most of what a busy writer
// waited for. Here the writer's automatic checkpoint is only a safety net
// (writerAutoCheckpoint pages), and a goroutine with its own connection
// runs passive checkpoints while commits go on: a passive checkpoint takes
// no lock a writer needs, so the fsyncs leave the commit path.
const (
	// checkpointEvery is how often the checkpointer looks for new commits.
	// Each checkpoint copies the newest version of the pages written since
	// the last one, so a longer interval copies a hot page fewer times.
	checkpointEvery = 250 * time.Millisecond
	// writerAutoCheckpoint pages (4 KiB each) in the WAL make the writer
	// checkpoint itself, in case the checkpointer cannot keep up.
	writerAutoCheckpoint = 16000
)

// checkpointer runs passive checkpoints on its own connection after
// commits.
type checkpointer struct {
	db      *sql.DB
	kick    chan struct{} // a commit happened since the last checkpoint
	stop    chan struct{}
	stopped sync.WaitGroup
}

func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	c.stopped.Add(1)
	go c.loop()
	return c
}

// committed notes a commit; it never blocks.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer c.stopped.Done()
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		select {
		case <-c.kick:
		default:
			continue // nothing committed since the last look
		}
		// A failed checkpoint (a busy lock, an I/O error) leaves the WAL as
		// it was; the next one, or the writer's own, catches up.
		_, _ = c.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
	}
}

// close stops the loop and closes the connection.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.stop)
	c.stopped.Wait()
	return c.db.Close()
}
