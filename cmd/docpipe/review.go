package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/review"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

func init() { addCommand(newReviewCmd) }

func newReviewCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review",
		Short: "List, claim and decide the reviews workflows wait for",
		Long: `A review stage stops its workflow (status waiting_review) until a person
approves or rejects it. A review is named WORKFLOW.STAGE. Claiming one
makes you its only decider until you release it. Approving continues the
pipeline (with --set edits of the summary or of a stage's output, which
later stages read); rejecting fails the workflow with your comment. Every
action is recorded in the workflow's audit trail with your name. On this
machine ` + "`docpipe work`" + ` continues a decided workflow; on AWS the
decision answers the waiting Step Functions task at once.`,
		Example: `  docpipe review list
  docpipe review list --mine alice --overdue
  docpipe review show 01J8Z3K6Q2V4N7T1X5B9C0D2EF.check
  docpipe review claim 01J8Z3K6Q2V4N7T1X5B9C0D2EF.check --by alice
  docpipe review approve 01J8Z3K6Q2V4N7T1X5B9C0D2EF.check --by alice --set summary="Signed lease, 3 years."
  docpipe review reject 01J8Z3K6Q2V4N7T1X5B9C0D2EF.check --by alice --comment "wrong customer"`,
		Args: exactArgs(0, "a subcommand: list, show, claim, release, approve or reject"),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newReviewListCmd(a), newReviewShowCmd(a))
	for _, action := range []pipeline.ReviewAction{pipeline.ActionClaim, pipeline.ActionRelease, pipeline.ActionApprove, pipeline.ActionReject} {
		cmd.AddCommand(newReviewActionCmd(a, action))
	}
	return cmd
}

func newReviewListCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "Undecided reviews, soonest due first",
		Example: `  docpipe review list
  docpipe review list --mine alice
  docpipe review list --overdue --project contracts --json`,
		Args: exactArgs(0, "no arguments"),
	}
	mine := cmd.Flags().String("mine", "", "only reviews NAME may decide: claimed by NAME or assigned to NAME")
	overdue := cmd.Flags().Bool("overdue", false, "only reviews past their due date")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		b, err := a.openSource(ctx)
		if noState(err) {
			return printReviews(a, nil, time.Now())
		}
		if err != nil {
			return err
		}
		defer b.Close()
		project := ""
		if cmd.Flags().Changed("project") {
			project = a.project
		}
		list, err := listReviews(ctx, b.Repo, *mine, *overdue, project, time.Now())
		if err != nil {
			return err
		}
		return printReviews(a, list, time.Now())
	}
	return cmd
}

// listReviews reads the open reviews (or the overdue ones: one range
// query on the due dates) and keeps those of the project and the reviewer
// asked for.
func listReviews(ctx context.Context, repo *pipeline.Repository, mine string, overdue bool, project string, now time.Time) ([]pipeline.Review, error) {
	var list []pipeline.Review
	var err error
	if overdue {
		list, err = repo.ListOverdueReviews(ctx, now)
	} else {
		list, err = repo.ListOpenReviews(ctx)
	}
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list, func(v pipeline.Review) bool {
		return project != "" && v.ProjectID != project || mine != "" && !mayDecide(v, mine)
	}), nil
}

func mayDecide(v pipeline.Review, name string) bool {
	if v.State == pipeline.ReviewClaimed {
		return v.Owner == name
	}
	return slices.Contains(v.Assign, name) || len(v.Assign) == 0
}

func printReviews(a *app, list []pipeline.Review, now time.Time) error {
	if a.jsonOut {
		enc := json.NewEncoder(a.stdout)
		for _, v := range list {
			if err := enc.Encode(v); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stdout, "no reviews waiting")
		return nil
	}
	t := newTextTable(a.stdout, "REVIEW", "FILE", "STATE", "WHO", "DUE")
	for _, v := range list {
		t.row(v.ID, v.FileName, v.State, reviewers(v), dueText(v, now))
	}
	return t.flush()
}

// reviewers says who may decide: the owner, the people or the group.
func reviewers(v pipeline.Review) string {
	switch {
	case v.Owner != "":
		return v.Owner + " (claimed)"
	case len(v.Assign) > 0:
		return strings.Join(v.Assign, ", ")
	case v.Group != "":
		return "group " + v.Group
	}
	return "anyone"
}

func dueText(v pipeline.Review, now time.Time) string {
	s := localTime(v.DueAt)
	if v.Overdue(now) {
		s += " (overdue)"
	}
	return s
}

func newReviewShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "show [flags] REVIEW",
		Short:   "One review: who, due, state, decision",
		Example: `  docpipe review show 01J8Z3K6Q2V4N7T1X5B9C0D2EF.check --json`,
		Args:    exactArgs(1, "one REVIEW id (WORKFLOW.STAGE)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			wf, stage, err := pipeline.ParseReviewID(args[0])
			if err != nil {
				return usageError{err}
			}
			b, err := a.openSource(ctx)
			if err != nil {
				return err
			}
			defer b.Close()
			v, err := b.Repo.GetReview(ctx, wf, stage)
			if err != nil {
				return missing(err, noReview(args[0]))
			}
			if a.jsonOut {
				v.TaskToken = "" // a credential to answer the task, not for display
				return json.NewEncoder(a.stdout).Encode(v)
			}
			t := newTextTable(a.stdout)
			for _, row := range [][2]string{
				{"review", v.ID}, {"file", v.FileName}, {"stage", v.Stage}, {"state", string(v.State)},
				{"who", reviewers(v)}, {"due", dueText(v, time.Now())}, {"hard limit", localTime(v.HardLimitAt)},
				{"decided by", v.DecidedBy}, {"comment", v.Comment},
			} {
				if row[1] != "" {
					t.row(row[0]+":", row[1])
				}
			}
			for _, k := range sortedKeys(v.Edits) {
				t.row("set "+k+":", v.Edits[k])
			}
			return t.flush()
		},
	}
}

// noReview says a review id names no review.
func noReview(id string) string {
	return "no review " + id + " here; `docpipe review list` shows the reviews waiting"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func newReviewActionCmd(a *app, action pipeline.ReviewAction) *cobra.Command {
	short := map[pipeline.ReviewAction]string{
		pipeline.ActionClaim:   "Take a review: only you can decide it until you release it",
		pipeline.ActionRelease: "Give a claimed review back to its reviewers",
		pipeline.ActionApprove: "Approve a review: the pipeline goes on, with your edits",
		pipeline.ActionReject:  "Reject a review: the workflow fails with your comment",
	}[action]
	cmd := &cobra.Command{
		Use:     string(action) + " [flags] REVIEW",
		Short:   short,
		Example: fmt.Sprintf("  docpipe review %s 01J8Z3K6Q2V4N7T1X5B9C0D2EF.check --by alice", action),
		Args:    exactArgs(1, "one REVIEW id (WORKFLOW.STAGE)"),
	}
	by := cmd.Flags().String("by", "", "who takes the action (required)")
	var comment string
	var sets []string
	if action == pipeline.ActionApprove || action == pipeline.ActionReject {
		cmd.Flags().StringVar(&comment, "comment", "", "a note recorded with the decision (a rejection's reason)")
	}
	if action == pipeline.ActionApprove {
		cmd.Flags().StringArrayVar(&sets, "set", nil, "NAME=VALUE: replace the summary's text (summary=...) or a field of a stage's JSON output (STAGE.FIELD=...)")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		if *by == "" {
			return usageErrorf("--by NAME is required: every review action records who took it")
		}
		edits := map[string]string{}
		for _, s := range sets {
			k, v, ok := strings.Cut(s, "=")
			if !ok || k == "" {
				return usageErrorf("--set %q: want NAME=VALUE", s)
			}
			edits[k] = v
		}
		if len(edits) == 0 {
			edits = nil
		}
		b, err := a.openSource(ctx)
		if err != nil {
			return err
		}
		defer b.Close()
		var callback review.TaskCallback
		if a.onAWS() {
			cfg, err := backend.LoadAWSConfig(ctx, nil)
			if err != nil {
				return err
			}
			callback = sfn.ReviewCallback{API: awssfn.NewFromConfig(cfg)}
		}
		v, err := review.Decide(ctx, b.Repo, b.Blobs, callback, args[0], pipeline.Decision{Action: action, By: *by, Comment: comment, Edits: edits})
		if err != nil {
			return missing(err, noReview(args[0]))
		}
		fmt.Fprintf(a.stdout, "review %s is %s%s\n", v.ID, v.State, ownerNote(v))
		return nil
	}
	return cmd
}

func ownerNote(v pipeline.Review) string {
	switch {
	case v.State == pipeline.ReviewClaimed:
		return " by " + v.Owner
	case v.State.Decided():
		return " by " + v.DecidedBy
	}
	return ""
}
