package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/pipeline"
)

func init() { addCommand(newProjectCmd) }

func newProjectCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Create projects and change the settings their stages read",
		Long: `A project groups documents and carries settings handed to every stage of
its workflows: language, a free-text document prompt, OCR settings and the
pipeline its documents run when none is named.`,
		Example: `  docpipe project create contracts --name "Supplier contracts" --language de --pipeline redact
  docpipe project set contracts ocr.languages=deu,eng prompt="Supplier contracts from 2020 on"`,
		Args: commandGroupArgs,
	}
	cmd.AddCommand(newProjectCreateCmd(a), newProjectShowCmd(a), newProjectSetCmd(a))
	return cmd
}

func newProjectCreateCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create [flags] ID",
		Short: "Create a project",
		Example: `  docpipe project create contracts
  docpipe project create contracts --name "Supplier contracts" --language de --prompt "Supplier contracts" --pipeline redact@2`,
		Args: exactArgs(1, "one project ID"),
	}
	name := cmd.Flags().String("name", "", "display name (default: the id)")
	language := cmd.Flags().String("language", "", "the documents' language, ISO 639-1 (default: detect)")
	prompt := cmd.Flags().String("prompt", "", "free text handed to every stage: what the documents are, what to look for")
	pipe := cmd.Flags().String("pipeline", "", "pipeline run when none is named: NAME or NAME@VERSION (default: the built-in one)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		p := pipeline.Project{ID: args[0], Name: *name}
		if p.Name == "" {
			p.Name = p.ID
		}
		for key, value := range map[string]string{"language": *language, "prompt": *prompt, "pipeline": *pipe} {
			if value == "" {
				continue
			}
			if err := setProjectKey(&p, key, value); err != nil {
				return usageError{err}
			}
		}
		b, err := a.openStore(cmd.Context())
		if err != nil {
			return err
		}
		defer b.Close()
		if err := b.Repo.CreateProject(cmd.Context(), p); err != nil {
			if errors.Is(err, pipeline.ErrAlreadyExists) {
				return fmt.Errorf("project %s exists; `docpipe project set %s KEY=VALUE` changes it", p.ID, p.ID)
			}
			return err
		}
		p, err = b.Repo.GetProject(cmd.Context(), p.ID)
		if err != nil {
			return err
		}
		return printProject(a, p)
	}
	return cmd
}

func newProjectShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show [flags] ID",
		Short: "A project's settings",
		Example: `  docpipe project show contracts
  docpipe project show contracts --json`,
		Args: exactArgs(1, "one project ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.openSource(cmd.Context())
			if err != nil {
				return err
			}
			defer b.Close()
			p, err := b.Repo.GetProject(cmd.Context(), args[0])
			if err != nil {
				return notFoundHint(err, "project "+args[0], "`docpipe project create ID` creates it")
			}
			return printProject(a, p)
		},
	}
}

func newProjectSetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "set ID KEY=VALUE...",
		Short: "Change project settings",
		Long: `Change project settings. Keys: ` + strings.Join(projectKeys, ", ") + `.
An empty value clears a setting. The change applies to the project as it is
stored: two changes at once both land, neither overwrites the other.`,
		Example: `  docpipe project set contracts language=de pipeline=redact@2
  docpipe project set contracts ocr.enabled=false
  docpipe project set contracts ocr.languages=deu,eng prompt="Supplier contracts"`,
		Args: minArgs(2, "a project ID and at least one KEY=VALUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			type change struct{ key, value string }
			var changes []change
			for _, arg := range args[1:] {
				key, value, ok := strings.Cut(arg, "=")
				if !ok {
					return usageErrorf("%q is not KEY=VALUE (keys: %s)", arg, strings.Join(projectKeys, ", "))
				}
				if err := setProjectKey(&pipeline.Project{}, key, value); err != nil {
					return usageError{err}
				}
				changes = append(changes, change{key, value})
			}
			b, err := a.openSource(cmd.Context())
			if err != nil {
				return err
			}
			defer b.Close()
			p, err := b.Repo.UpdateProject(cmd.Context(), args[0], func(p *pipeline.Project) error {
				for _, c := range changes {
					if err := setProjectKey(p, c.key, c.value); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return notFoundHint(err, "project "+args[0], "`docpipe project create ID` creates it")
			}
			return printProject(a, p)
		},
	}
}

// projectKeys are the settings `project set` changes.
var projectKeys = []string{"name", "language", "prompt", "pipeline", "ocr.enabled", "ocr.languages", "max_concurrent_workflows"}

// setProjectKey sets one setting from its command-line spelling.
func setProjectKey(p *pipeline.Project, key, value string) error {
	s := &p.Settings
	switch key {
	case "name":
		p.Name = value
	case "language":
		if value != "" && (len(value) != 2 || strings.ToLower(value) != value) {
			return fmt.Errorf("language %q is not a two-letter ISO 639-1 code such as en or de", value)
		}
		s.Language = value
	case "prompt", "document_prompt":
		s.DocumentPrompt = value
	case "pipeline":
		if value != "" {
			if _, _, err := parsePipelineRef(value); err != nil {
				return err
			}
		}
		s.Pipeline = value
	case "ocr.enabled":
		if value == "" {
			s.OCR.Enabled = nil
			return nil
		}
		on, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("ocr.enabled is true or false, not %q", value)
		}
		s.OCR.Enabled = &on
	case "ocr.languages":
		s.OCR.Languages = nil
		for l := range strings.SplitSeq(value, ",") {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(s.OCR.Languages, l) {
				s.OCR.Languages = append(s.OCR.Languages, l)
			}
		}
	case "max_concurrent_workflows":
		if value == "" {
			s.MaxConcurrentWorkflows = 0
			return nil
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return fmt.Errorf("max_concurrent_workflows is a whole number, 0 for no limit, not %q", value)
		}
		s.MaxConcurrentWorkflows = n
	default:
		return fmt.Errorf("unknown project setting %q (keys: %s)", key, strings.Join(projectKeys, ", "))
	}
	return nil
}

func printProject(a *app, p pipeline.Project) error {
	if a.jsonOut {
		return writeJSON(a.stdout, p)
	}
	s := p.Settings
	ocr := "on when an engine is installed"
	if !s.OCR.On() {
		ocr = "off"
	}
	if len(s.OCR.Languages) > 0 {
		ocr += ", languages " + strings.Join(s.OCR.Languages, ",")
	}
	w := a.stdout
	line := func(k, v string) { fmt.Fprintf(w, "%-10s %s\n", k+":", v) }
	line("project", p.ID)
	line("name", p.Name)
	line("language", orText(s.Language, "detect"))
	line("prompt", orText(s.DocumentPrompt, "-"))
	line("ocr", ocr)
	line("pipeline", orText(s.Pipeline, "built-in"))
	if s.MaxConcurrentWorkflows > 0 {
		line("max runs", fmt.Sprintf("%d workflows at once", s.MaxConcurrentWorkflows))
	}
	return nil
}
