// Package backend is where the binaries choose drivers: SQLite and a
// directory on one machine, DynamoDB and S3 on AWS. Nothing below cmd/
// knows which one it runs on.
package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitesearch"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/metered"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/table"
)

// Environment variables the binaries read. The Terraform module sets the
// same names; a test checks that they agree.
const (
	EnvTable           = "DOCPIPE_TABLE"             // DynamoDB table name
	EnvBucket          = "DOCPIPE_BUCKET"            // S3 bucket name
	EnvStateMachineARN = "DOCPIPE_STATE_MACHINE_ARN" // Step Functions state machine
	EnvProject         = "DOCPIPE_PROJECT"           // project new documents belong to
	EnvIncomingPrefix  = "DOCPIPE_INCOMING_PREFIX"   // S3 key prefix uploads arrive under
	EnvActivityPrefix  = "DOCPIPE_ACTIVITY_PREFIX"   // activity name prefix (worker mode)
	EnvTaskQueueURL    = "DOCPIPE_TASK_QUEUE_URL"    // SQS queue of queue-mode tasks (worker mode)
	EnvPDFBackend      = "DOCPIPE_PDF_BACKEND"       // auto, poppler or go
	EnvPipelineDir     = "DOCPIPE_PIPELINE_DIR"      // <dir>/<pipeline>/ holds a pipeline's commands (workers)
	EnvTranscribe      = "DOCPIPE_TRANSCRIBE"        // aws: Amazon Transcribe for audio; none (default): pocketsphinx when installed
	EnvOCR             = "DOCPIPE_OCR"               // textract: Amazon Textract reads page images; tesseract (default): on the machine
	EnvWebhookURL      = "DOCPIPE_WEBHOOK_URL"       // outcome events go to this webhook
	EnvWebhookSecret   = "DOCPIPE_WEBHOOK_SECRET"    // its signing secret, whsec_... (local runs; the relay Lambda reads EnvWebhookSecretARN)
	EnvEventBridgeBus  = "DOCPIPE_EVENTBRIDGE_BUS"   // outcome events go to this bus
	// EnvAllowPrivateNetwork "true" lets the relay's webhooks reach
	// addresses that are not public.
	EnvAllowPrivateNetwork = "DOCPIPE_ALLOW_PRIVATE_NETWORK"
	// EnvWebhookSecretARN names a Secrets Manager secret or SSM SecureString
	// parameter holding the webhook's signing secret (the relay Lambda).
	EnvWebhookSecretARN = "DOCPIPE_WEBHOOK_SECRET_ARN"
)

// DefaultProject is the project documents join when none is named.
const DefaultProject = "default"

// DefaultIncomingPrefix is where uploads that should be processed go.
const DefaultIncomingPrefix = "incoming/"

// Backend is an opened state table and blob store.
type Backend struct {
	Kind   string // "local" or "aws"
	Table  table.Table
	Blobs  blob.Store
	Repo   *pipeline.Repository
	Bucket string // S3 bucket, or "local"
	// Home is the state directory of a local backend.
	Home string
	// Search is the local search index, kept in step with the table;
	// nil on AWS, which has none.
	Search  *sqlitesearch.Index
	closers []func() error
}

// Close releases the backend.
func (b *Backend) Close() error {
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		errs = append(errs, b.closers[i]())
	}
	return errors.Join(errs...)
}

// Meter makes every table and blob request of b count on m.
func (b *Backend) Meter(m *metered.Meter) {
	b.Table = m.Table(b.Table)
	b.Blobs = m.Store(b.Blobs)
	b.Repo = newRepository(b.Table)
}

// newRepository is the repository every binary uses: a workflow that
// records no pipeline version, or the built-in pipeline's name before any
// version of it is stored, resolves to the built-in pipeline.
func newRepository(t table.Table) *pipeline.Repository {
	return pipeline.NewRepository(t, pipeline.WithBuiltinPipeline(pipelinefile.Default()))
}

// Local layout under the home directory.
const (
	localStateFile = "state.db"
	localBlobDir   = "blobs"
	localLockFile  = "lock"
	localTempDir   = "tmp"
)

// OpenLocal opens (creating if needed) the state home: a SQLite file and a
// blob directory. The home is made absolute: the paths handed to a
// command stage (its inputs, its needs' outputs) must mean the same in the
// directory the stage runs in.
func OpenLocal(home string) (*Backend, error) {
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("state home %s: %w", home, err)
	}
	if err := os.MkdirAll(filepath.Join(home, localTempDir), 0o755); err != nil {
		return nil, fmt.Errorf("state home %s: %w", home, err)
	}
	blobs, err := dirblob.New(filepath.Join(home, localBlobDir))
	if err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	// The search index is written in the table's own transactions.
	indexer := &sqlitesearch.Indexer{Blobs: blobs}
	state := filepath.Join(home, localStateFile)
	tbl, err := sqlitetable.Open(state, sqlitetable.WithWriteHook(indexer))
	if err != nil {
		return nil, fmt.Errorf("open state: %w", err)
	}
	repo := newRepository(tbl)
	// The table reads a file's committed state on connections of their
	// own, so reading pipeline versions in its writer's transaction
	// waits for nothing.
	indexer.StageOrder = func(ctx context.Context, name string, version int) ([]string, error) {
		return StageOrder(ctx, repo, name, version)
	}
	idx, err := sqlitesearch.Open(state, indexer)
	if err != nil {
		tbl.Close()
		return nil, fmt.Errorf("open search index: %w", err)
	}
	return &Backend{
		Kind: "local", Table: tbl, Blobs: blobs, Repo: repo,
		Bucket: "local", Home: home, Search: idx, closers: []func() error{tbl.Close, idx.Close},
	}, nil
}

// StageOrder names the stages of a pipeline version in order.
func StageOrder(ctx context.Context, repo *pipeline.Repository, name string, version int) ([]string, error) {
	def, err := repo.Definition(ctx, name, version)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(def.Stages))
	for i, st := range def.Stages {
		names[i] = st.Name
	}
	return names, nil
}

// TempDir is where steps of a local backend download sources.
func (b *Backend) TempDir() string {
	if b.Home == "" {
		return ""
	}
	return filepath.Join(b.Home, localTempDir)
}

// ErrBusy means another docpipe process is working on the same home.
var ErrBusy = errors.New("another docpipe process is working on this state home")

// LockHome takes an exclusive lock on a local home so that two processes
// never run the same workflows at once. The lock dies with the process, so
// a killed run never leaves it stale.
func (b *Backend) LockHome() error {
	if b.Home == "" {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(b.Home, localLockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w (%s)", ErrBusy, b.Home)
		}
		return err
	}
	b.closers = append(b.closers, f.Close)
	return nil
}

// WaitLockHome is LockHome that waits for the holder to finish.
func (b *Backend) WaitLockHome(ctx context.Context) error {
	f, err := os.OpenFile(filepath.Join(b.Home, localLockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return err
		}
		b.closers = append(b.closers, f.Close)
		return nil
	case <-ctx.Done():
		f.Close()
		return ctx.Err()
	}
}
