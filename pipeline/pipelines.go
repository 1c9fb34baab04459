package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Pipeline versions are immutable: applying a definition stores a new
// version (the version item with the whole definition, one item per stage)
// and moves the CURRENT pointer, in one transaction. Workflows record the
// version they run, so applying a new one never changes a running workflow.
//
// Listing pipelines reads a registry partition (PipelineRegistryPK) with
// one item per pipeline, written in the same transaction as each version:
// the alternative, a Scan for CURRENT items, would read the whole table.

// PipelineVersion is one stored version of a pipeline.
type PipelineVersion struct {
	Name        string    `json:"name"`
	Version     int       `json:"version"`
	Description string    `json:"description,omitempty"`
	ContentHash string    `json:"content_hash"`
	CreatedAt   time.Time `json:"created_at"`
	Stages      int       `json:"stages"`
	// SourceDir is the absolute folder of the file the version was first
	// applied from, where its relative command paths resolve. It is not
	// content: applying the same file from another folder stores nothing
	// and keeps this folder.
	SourceDir string `json:"source_dir,omitempty"`
	// StateMachineARN is the Step Functions state machine deployed for
	// this version on AWS (one per version: docpipe-<name>-v<version>).
	StateMachineARN string     `json:"state_machine_arn,omitempty"`
	Definition      Definition `json:"-"`
}

// String is NAME@VERSION.
func (v PipelineVersion) String() string { return fmt.Sprintf("%s@%d", v.Name, v.Version) }

// versionData is the version item's payload: the summary plus the
// definition as JSON, byte for byte what ContentHash hashed.
type versionData struct {
	PipelineVersion
	Definition string `json:"definition"`
}

// stageData is one stage item's payload.
type stageData struct {
	Pipeline string `json:"pipeline"`
	Version  int    `json:"version"`
	Position int    `json:"position"`
	Stage    Stage  `json:"stage"`
}

// pipelinePointer is the CURRENT item and the registry item.
type pipelinePointer struct {
	Name        string    `json:"name"`
	Version     int       `json:"version"`
	Description string    `json:"description,omitempty"`
	ContentHash string    `json:"content_hash"`
	UpdatedAt   time.Time `json:"updated_at"`
	// ApplyID names the apply that wrote the pointer, so that an apply
	// whose answer was lost knows its own write when it reads it back.
	ApplyID string `json:"apply_id,omitempty"`
}

// maxPipelineStages keeps a version within one transaction: its stages,
// the version item, CURRENT and the registry item.
const maxPipelineStages = table.MaxTransactItems - 3

// ApplyPipeline stores def as the pipeline's next version unless its
// content equals the current version's, in which case nothing is written
// and the current version is returned with created false. def.Dir, where
// the file was read from, is stored with the version as its SourceDir. Two applies
// racing each other get consecutive versions: the CURRENT pointer moves only
// from the version the writer read, and the loser reads again.
func (r *Repository) ApplyPipeline(ctx context.Context, def Definition) (version int, created bool, err error) {
	if err := validName("pipeline", def.Name); err != nil {
		return 0, false, err
	}
	if len(def.Stages) == 0 || len(def.Stages) > maxPipelineStages {
		return 0, false, fmt.Errorf("pipeline: %s has %d stages; a stored pipeline has 1 to %d", def.Name, len(def.Stages), maxPipelineStages)
	}
	body, err := json.Marshal(def)
	if err != nil {
		return 0, false, fmt.Errorf("pipeline: encode %s: %w", def.Name, err)
	}
	hash := def.ContentHash()
	what := func() string { return "apply pipeline " + def.Name }
	applyID := NewID()
	err = r.retry(ctx, what, func() error {
		cur, err := r.currentPointer(ctx, def.Name)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case cur.ContentHash == hash:
			// Ours when an attempt committed but its answer was lost.
			version, created = cur.Version, cur.ApplyID == applyID
			return nil
		}
		next := cur.Version + 1
		now := r.now().UTC()
		actions, err := versionActions(def, next, hash, string(body), now)
		if err != nil {
			return err
		}
		ptr := pipelinePointer{Name: def.Name, Version: next, Description: def.Description, ContentHash: hash, UpdatedAt: now, ApplyID: applyID}
		curItem, err := entityItem(PipelineCurrentKey(def.Name), ptr)
		if err != nil {
			return err
		}
		regItem, err := entityItem(PipelineRegistryKey(def.Name), ptr)
		if err != nil {
			return err
		}
		var moveFrom table.Cond = table.NotExists{Path: table.AttrPK}
		if cur.Version > 0 {
			moveFrom = table.Equals{Path: "data.version", Value: cur.Version}
		}
		actions = append(actions, table.TxPut{Item: curItem, Cond: moveFrom}, table.TxPut{Item: regItem})
		err = r.t.Transact(ctx, actions)
		switch {
		case err == nil:
			version, created = next, true
			return nil
		case lostRace(err):
			return errLostRace // another apply moved CURRENT first: read it again
		default:
			return fmt.Errorf("pipeline: apply %s@%d: %w", def.Name, next, err)
		}
	})
	return version, created, err
}

// versionActions puts the version item and its stage items, each only if
// absent: versions are never overwritten.
func versionActions(def Definition, version int, hash, body string, now time.Time) ([]table.TxAction, error) {
	absent := table.NotExists{Path: table.AttrPK}
	head := versionData{
		PipelineVersion: PipelineVersion{
			Name: def.Name, Version: version, Description: def.Description,
			ContentHash: hash, CreatedAt: now, Stages: len(def.Stages),
			SourceDir: def.Dir,
		},
		Definition: body,
	}
	it, err := entityItem(PipelineVersionKey(def.Name, version), head)
	if err != nil {
		return nil, err
	}
	actions := []table.TxAction{table.TxPut{Item: it, Cond: absent}}
	for i, st := range def.Stages {
		it, err := entityItem(PipelineStageKey(def.Name, version, i), stageData{Pipeline: def.Name, Version: version, Position: i, Stage: st})
		if err != nil {
			return nil, err
		}
		actions = append(actions, table.TxPut{Item: it, Cond: absent})
	}
	return actions, nil
}

func (r *Repository) currentPointer(ctx context.Context, name string) (pipelinePointer, error) {
	var p pipelinePointer
	return p, r.get(ctx, PipelineCurrentKey(name), &p)
}

// CurrentPipelineVersion returns the number of a pipeline's current
// version; ErrNotFound when none was applied.
func (r *Repository) CurrentPipelineVersion(ctx context.Context, name string) (int, error) {
	p, err := r.currentPointer(ctx, name)
	return p.Version, err
}

// GetPipeline reads one version with all its stages (version 0: the
// current one) in one Query on the version's sort-key prefix.
func (r *Repository) GetPipeline(ctx context.Context, name string, version int) (PipelineVersion, error) {
	if version == 0 {
		v, err := r.CurrentPipelineVersion(ctx, name)
		if err != nil {
			return PipelineVersion{}, fmt.Errorf("pipeline %s: %w", name, err)
		}
		version = v
	}
	items, err := queryAll(ctx, r.t, table.Query{PK: PrefixPipeline + name, SKPrefix: PipelineVersionSK(version)})
	if err != nil {
		return PipelineVersion{}, err
	}
	if len(items) == 0 || items[0].Key().SK != PipelineVersionSK(version) {
		return PipelineVersion{}, fmt.Errorf("pipeline %s@%d: %w", name, version, ErrNotFound)
	}
	var head versionData
	if err := decode(items[0], &head); err != nil {
		return PipelineVersion{}, err
	}
	v := head.PipelineVersion
	if err := json.Unmarshal([]byte(head.Definition), &v.Definition); err != nil {
		return PipelineVersion{}, fmt.Errorf("pipeline: decode %s: %w", v, err)
	}
	// The stage items are the stages; the copy in the definition JSON is
	// what the content hash covers.
	stages := make([]Stage, 0, len(items)-1)
	for _, it := range items[1:] {
		var sd stageData
		if err := decode(it, &sd); err != nil {
			return PipelineVersion{}, err
		}
		stages = append(stages, sd.Stage)
	}
	if len(stages) != v.Stages {
		return PipelineVersion{}, fmt.Errorf("pipeline: %s has %d stage items, want %d", v, len(stages), v.Stages)
	}
	v.Definition.Stages = stages
	v.Definition.Dir = v.SourceDir
	return v, nil
}

// SetPipelineStateMachine records the state machine deployed for a stored
// version. The definition stays as it was: only where it runs is added.
func (r *Repository) SetPipelineStateMachine(ctx context.Context, name string, version int, arn string) error {
	_, err := r.t.Update(ctx, PipelineVersionKey(name, version),
		[]table.Update{table.Set{Path: "data.state_machine_arn", Value: arn}},
		table.Exists{Path: table.AttrPK})
	if errors.Is(err, table.ErrConditionFailed) {
		return fmt.Errorf("pipeline %s@%d: %w", name, version, ErrNotFound)
	}
	return err
}

// GetPipelineStage reads one stage of a version by name (version 0: the
// current one).
func (r *Repository) GetPipelineStage(ctx context.Context, name string, version int, stage string) (Stage, error) {
	v, err := r.resolveVersion(ctx, name, version)
	if err != nil {
		return Stage{}, err
	}
	def, err := r.Definition(ctx, name, v)
	if err != nil {
		return Stage{}, err
	}
	for i, st := range def.Stages {
		if st.Name == stage {
			return r.getPipelineStageAt(ctx, name, v, i)
		}
	}
	return Stage{}, fmt.Errorf("pipeline %s@%d has no stage %q: %w", name, v, stage, ErrNotFound)
}

// getPipelineStageAt reads the stage at position i with one GetItem.
func (r *Repository) getPipelineStageAt(ctx context.Context, name string, version, i int) (Stage, error) {
	var sd stageData
	if err := r.get(ctx, PipelineStageKey(name, version, i), &sd); err != nil {
		return Stage{}, err
	}
	return sd.Stage, nil
}

func (r *Repository) resolveVersion(ctx context.Context, name string, version int) (int, error) {
	if version > 0 {
		return version, nil
	}
	v, err := r.CurrentPipelineVersion(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("pipeline %s: %w", name, err)
	}
	return v, nil
}

// PipelineSummary is one pipeline as listed: its current version.
type PipelineSummary = pipelinePointer

// ListPipelines returns every pipeline with its current version, by name.
func (r *Repository) ListPipelines(ctx context.Context) ([]PipelineSummary, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: PipelineRegistryPK, SKPrefix: PrefixPipeline})
	if err != nil {
		return nil, err
	}
	return decodeAll[PipelineSummary](items)
}

// PipelineHistory returns a pipeline's versions, newest first, without
// their definitions. The partition interleaves stage items with versions;
// they are read and passed over.
func (r *Repository) PipelineHistory(ctx context.Context, name string) ([]PipelineVersion, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: PrefixPipeline + name, SKPrefix: PrefixPipelineVersion, Reverse: true})
	if err != nil {
		return nil, err
	}
	var out []PipelineVersion
	for _, it := range items {
		if IsPipelineStageSK(it.Key().SK) {
			continue
		}
		var v versionData
		if err := decode(it, &v); err != nil {
			return nil, err
		}
		out = append(out, v.PipelineVersion)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pipeline %s: %w", name, ErrNotFound)
	}
	return out, nil
}

// WorkflowDefinition is the pipeline version wf runs: the one it recorded
// when it started, whatever the pipeline's current version is now.
func (r *Repository) WorkflowDefinition(ctx context.Context, wf Workflow) (Definition, error) {
	def, err := r.Definition(ctx, wf.Pipeline, wf.PipelineVersion)
	if err != nil {
		return def, fmt.Errorf("workflow %s: %w", wf.ID, err)
	}
	return def, nil
}

// Definition resolves a pipeline version to its definition: name "" is the
// built-in pipeline (WithBuiltinPipeline), version 0 the current version.
// The built-in pipeline's name with nothing stored under it resolves to the
// built-in definition. Stored versions are immutable, so they are cached.
func (r *Repository) Definition(ctx context.Context, name string, version int) (Definition, error) {
	if name == "" {
		if r.builtin == nil {
			return Definition{}, errors.New("pipeline: no pipeline named and no built-in pipeline configured")
		}
		name = r.builtin.Name
	}
	if version == 0 {
		v, err := r.CurrentPipelineVersion(ctx, name)
		switch {
		case errors.Is(err, ErrNotFound) && r.builtin != nil && name == r.builtin.Name:
			return r.builtin.Clone(), nil
		case err != nil:
			return Definition{}, fmt.Errorf("pipeline %s: %w", name, err)
		}
		version = v
	}
	key := fmt.Sprintf("%s@%d", name, version)
	if d, ok := r.versions.Load(key); ok {
		return d.(Definition).Clone(), nil
	}
	v, err := r.GetPipeline(ctx, name, version)
	if err != nil {
		return Definition{}, err
	}
	r.versions.Store(key, v.Definition.Clone())
	return v.Definition, nil
}

// ListPipelineWorkflows pages through the workflows recorded as running a
// pipeline (any version), newest first: one Query on GSI2.
func (r *Repository) ListPipelineWorkflows(ctx context.Context, name string, limit int, pageToken string) ([]Workflow, string, error) {
	return queryPage[Workflow](ctx, r.t, table.Query{
		Index: table.IndexGSI2, PK: PipelineIndexPK(name), SKPrefix: PrefixWorkflow,
		Reverse: true, Limit: limit, PageToken: pageToken,
	})
}
