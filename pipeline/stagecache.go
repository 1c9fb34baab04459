package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"

	"github.com/docpipe/docpipe/pipeline/table"
)

// The stage cache: a stage's output is reused when everything that
// determines it is the same as for an earlier output. That is what the
// cache key hashes (CacheKey): the stage's definition as stored (how it
// runs, its settings and scope; not its timeout or retry policy, which
// change when it runs, not what it answers), the version of the code
// behind it, and the content of its inputs. A CachedOutput item per key
// (StageCacheKey) names the blob holding the output and the workflow that
// produced it. Entries are never the only copy of anything: they point
// into blobs a workflow wrote, which nothing deletes while the workflow
// exists (blobs are deleted only with their workflow, and only when no
// cache entry names them: see the blob store's retention notes in
// blobkeys.go).

// CachedOutput is one reusable stage output.
type CachedOutput struct {
	Key   string `json:"key"`
	Stage string `json:"stage"`
	// Workflow produced the output; a workflow reusing it records this
	// one's id as where its stage came from.
	Workflow WorkflowRef `json:"workflow"`
	// Blob holds the output. For a segment stage it is the producer's
	// batch blob and Index the segment's line in it.
	Blob      string `json:"blob"`
	Index     int    `json:"index,omitempty"`
	CreatedAt string `json:"created_at"`
}

// CacheKey hashes what determines one stage output. Add the inputs in a
// fixed order; each is framed by its name and length, so no two input
// lists hash alike by running into each other.
type CacheKey struct{ h hash.Hash }

// NewCacheKey starts the key of st's output, for st run by code at
// codeVersion.
func NewCacheKey(st Stage, codeVersion string) *CacheKey {
	k := &CacheKey{h: sha256.New()}
	def, err := json.Marshal(struct {
		Run      RunSpec        `json:"run"`
		Settings map[string]any `json:"settings,omitempty"`
		Scope    Scope          `json:"scope"`
	}{st.Run, st.Settings, st.Scope})
	if err != nil {
		panic("pipeline: a stored stage does not encode: " + err.Error()) // stored stages are plain data
	}
	k.Add("definition", def)
	k.Add("code", []byte(codeVersion))
	return k
}

// Add hashes one named input.
func (k *CacheKey) Add(name string, content []byte) *CacheKey {
	var n [8]byte
	for _, part := range [][]byte{[]byte(name), content} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		k.h.Write(n[:])
		k.h.Write(part)
	}
	return k
}

// Clone is a key with the inputs added so far, to add more to: the
// inputs a stage's segments share, then each segment's own.
func (k *CacheKey) Clone() *CacheKey {
	state, err := k.h.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
	if err != nil {
		panic("pipeline: sha256 state: " + err.Error())
	}
	h := sha256.New()
	if err := h.(interface{ UnmarshalBinary([]byte) error }).UnmarshalBinary(state); err != nil {
		panic("pipeline: sha256 state: " + err.Error())
	}
	return &CacheKey{h: h}
}

// Sum is the key.
func (k *CacheKey) Sum() string { return hex.EncodeToString(k.h.Sum(nil)) }

// LookupStageCache reads the cached output under key; found is false when
// there is none.
func (r *Repository) LookupStageCache(ctx context.Context, key string) (out CachedOutput, found bool, err error) {
	err = r.get(ctx, StageCacheKey(key), &out)
	switch {
	case errors.Is(err, ErrNotFound):
		return CachedOutput{}, false, nil
	case err != nil:
		return CachedOutput{}, false, err
	}
	return out, true, nil
}

// LookupStageCaches reads the cached outputs under keys, a hundred to a
// request where the table reads many at once: found[i] says whether
// keys[i] has one, outs[i].
func (r *Repository) LookupStageCaches(ctx context.Context, keys []string) (outs []CachedOutput, found []bool, err error) {
	tkeys := make([]table.Key, len(keys))
	for i, k := range keys {
		tkeys[i] = StageCacheKey(k)
	}
	outs = make([]CachedOutput, len(keys))
	found, err = table.GetManyData(ctx, r.t, tkeys, func(i int) any { return &outs[i] })
	if err != nil {
		return nil, nil, fmt.Errorf("pipeline: read stage cache: %w", err)
	}
	return outs, found, nil
}

// RecordStageCache stores cached outputs, many to a transaction. A key
// already there is overwritten: the same key means the same output, and
// the newest producer is the one whose blobs live longest. A key given
// twice (two identical segments of one batch) is stored once: a
// transaction may touch an item only once.
func (r *Repository) RecordStageCache(ctx context.Context, outs ...CachedOutput) error {
	puts, err := r.offerPuts(outs)
	if err != nil {
		return err
	}
	for acts := range slices.Chunk(puts, table.MaxTransactItems) {
		if len(acts) == 1 {
			err = r.t.Put(ctx, acts[0].(table.TxPut).Item, nil)
		} else {
			err = r.t.Transact(ctx, acts)
		}
		if err != nil {
			return fmt.Errorf("pipeline: record stage cache: %w", err)
		}
	}
	return nil
}

// offerPuts are the puts that store cached outputs, each key once (a
// transaction may touch an item once, and the same key is the same
// output), dated now when they carry no time.
func (r *Repository) offerPuts(outs []CachedOutput) ([]table.TxAction, error) {
	now := FormatTime(r.now())
	seen := make(map[string]bool, len(outs))
	var puts []table.TxAction
	for _, o := range outs {
		if seen[o.Key] {
			continue
		}
		seen[o.Key] = true
		if err := validName("step", o.Stage); err != nil {
			return nil, err
		}
		if o.CreatedAt == "" {
			o.CreatedAt = now
		}
		it, err := entityItem(StageCacheKey(o.Key), o)
		if err != nil {
			return nil, err
		}
		puts = append(puts, table.TxPut{Item: it})
	}
	return puts, nil
}

// OwnOutput makes the workflow ref's own blob own the one its readers
// read (StepProgress.OutputBlobKey), where a reused stage pointed at
// another workflow's: for a change written there (a review's edit),
// which must not reach the producer's output, which others read.
func (r *Repository) OwnOutput(ctx context.Context, ref WorkflowRef, prog StepProgress, own string) error {
	step := prog.pointingStep(ref, own)
	if step == "" {
		return nil
	}
	if _, err := r.t.Update(ctx, StepKey(ref.WorkflowID), []table.Update{table.Remove{Path: stepPath(step, "output")}}, table.Exists{Path: table.AttrPK}); err != nil {
		return fmt.Errorf("pipeline: own output %s of %s: %w", own, ref.WorkflowID, err)
	}
	return nil
}

// StageCounts is how a segment stage's batch answered its segments: from
// another workflow's output (Reused, the first from the workflow From),
// by running them (Ran), or from the workflow's own earlier answers, their
// inputs the same: a re-run from an earlier stage, or a segment of the
// same text as one answered before (Own).
type StageCounts struct {
	Reused, Ran, Own int
	From             string
}

func (c StageCounts) none() bool { return c.Reused == 0 && c.Ran == 0 && c.Own == 0 }

// stageCountUpdates are the step item's updates that count a batch's
// segments on stage (CountStageSegments); none for none.
func stageCountUpdates(stage string, c StageCounts) []table.Update {
	if c.none() {
		return nil
	}
	updates := []table.Update{
		table.Add{Path: stepPath(stage, "segments_reused"), Delta: float64(c.Reused)},
		table.Add{Path: stepPath(stage, "segments_run"), Delta: float64(c.Ran)},
	}
	if c.Own > 0 {
		updates = append(updates, table.Add{Path: stepPath(stage, "segments_reused_own"), Delta: float64(c.Own)})
	}
	if c.From != "" {
		updates = append(updates, table.Set{Path: stepPath(stage, "reused_from"), Value: c.From})
	}
	return updates
}

// CountStageSegments adds a batch's counts to a segment stage's. The
// stage's completion says it was reused when it ran none and reused some
// (ReusedFrom on its StepChange).
func (r *Repository) CountStageSegments(ctx context.Context, workflowID, stage string, c StageCounts) error {
	if err := validName("step", stage); err != nil {
		return err
	}
	updates := stageCountUpdates(stage, c)
	if len(updates) == 0 {
		return nil
	}
	if _, err := r.t.Update(ctx, StepKey(workflowID), updates, table.Exists{Path: stepPath(stage, "status")}); err != nil {
		return fmt.Errorf("pipeline: count segments of %s in %s: %w", stage, workflowID, err)
	}
	return nil
}
