package asl

// flow checks Next/End and that Next names a state of the same machine.
func (v *validator) flow(where string, m *Machine, f Flow) {
	switch {
	case f.Next != "" && f.End:
		v.add(where, "has both Next and End")
	case f.Next == "" && !f.End:
		v.add(where, "needs Next or End")
	case f.Next != "":
		v.target(join(where, "Next"), m, f.Next)
	}
}

func (v *validator) target(where string, m *Machine, next string) {
	if _, ok := m.States.ByName[next]; !ok {
		v.add(where, "refers to unknown state %q", next)
	}
}

// reachability reports states no path from StartAt reaches.
func (v *validator) reachability(where string, m *Machine) {
	if _, ok := m.States.ByName[m.StartAt]; !ok {
		return
	}
	seen := map[string]bool{}
	queue := []string{m.StartAt}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		st, ok := m.States.ByName[n]
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		queue = append(queue, successors(st)...)
	}
	for _, name := range m.States.Names {
		if !seen[name] {
			v.add(join(where, "States."+name), "state is unreachable from StartAt")
		}
	}
}

// successors lists the states st may move to: Next, Choice targets, Catch
// targets.
func successors(st State) []string {
	var out []string
	if next, _ := Transition(st); next != "" {
		out = append(out, next)
	}
	var catches []Catcher
	switch s := st.(type) {
	case *Task:
		catches = s.Catch
	case *Parallel:
		catches = s.Catch
	case *Map:
		catches = s.Catch
	case *Choice:
		for _, r := range s.Choices {
			if r != nil && r.Next != "" {
				out = append(out, r.Next)
			}
		}
		if s.Default != "" {
			out = append(out, s.Default)
		}
	}
	for _, c := range catches {
		out = append(out, c.Next)
	}
	return out
}
