package restore

import "strings"

// KeepBelow turns every action at or below one of dirs into a Keep with
// reason: the git backend's nested repositories (submodules) are never
// written or deleted by a restore, even when the target tree has files
// there (from before the directory became a repository).
func (p *Plan) KeepBelow(dirs []string, reason string) {
	if len(dirs) == 0 {
		return
	}
	for i := range p.Actions {
		a := &p.Actions[i]
		for _, d := range dirs {
			if a.Path == d || strings.HasPrefix(a.Path, d+"/") {
				a.Op, a.Reason = Keep, reason
				break
			}
		}
	}
	kept := p.prune[:0]
	for _, d := range p.prune {
		inside := false
		for _, n := range dirs {
			if d == n || strings.HasPrefix(d, n+"/") {
				inside = true
				break
			}
		}
		if !inside {
			kept = append(kept, d)
		}
	}
	p.prune = kept
}
