package dirblob_test

import (
	"context"
	"crypto/sha256"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
)

// BenchmarkConcurrentFlush has many writers on a store in the temporary
// directory (on its real disk), each doing a little CPU work, a Put and a
// Flush in turn, as the steps of many small documents do; it reports the
// flushes a sync served. On a busy CPU the waiters of a sync must all be
// free to go at once: handing the flush on from one to the next (each
// waiting for the scheduler) held up the next sync behind them.
func BenchmarkConcurrentFlush(b *testing.B) {
	s, err := dirblob.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var syncs atomic.Int64
	dirblob.SetSyncHook(s, func(root string) error {
		syncs.Add(1)
		return dirblob.SyncFilesystem(root)
	})
	var writer atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := strconv.FormatInt(writer.Add(1), 10)
		sum := sha256.Sum256([]byte(w))
		for i := 0; pb.Next(); i++ {
			for range 200 { // a step's own work between its writes
				sum = sha256.Sum256(sum[:])
			}
			ctx := blob.WithWriteMark(context.Background())
			if err := blob.PutBytes(ctx, s, "w"+w+"/"+strconv.Itoa(i), sum[:]); err != nil {
				b.Error(err)
				return
			}
			if err := s.Flush(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/float64(max(syncs.Load(), 1)), "flushes/sync")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "flushes/s")
}
